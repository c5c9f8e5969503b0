/** Small helpers for the benchmarks: percentiles, timing, bounded concurrency. */
export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

export async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const value = await work();
  return [value, performance.now() - started];
}

/** Runs `count` jobs with at most `concurrency` at once; returns each job's latency (ms) and the wall time. */
export async function load(
  count: number,
  concurrency: number,
  job: (i: number) => Promise<void>,
): Promise<{ latencies: number[]; wallMs: number }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const t = performance.now();
        await job(i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  return { latencies, wallMs: performance.now() - started };
}

/**
 * Runs loads in alternating rounds (A, B, …, A, B, …) and merges each side's samples, so that a
 * drift of the shared machine (other tenants, a compaction, a GC) lands on every side alike.
 */
export async function interleaved(
  rounds: number,
  perRound: number,
  concurrency: number,
  jobs: Array<(i: number) => Promise<void>>,
): Promise<Array<{ latencies: number[]; wallMs: number }>> {
  const merged = jobs.map(() => ({ latencies: [] as number[], wallMs: 0 }));
  for (let round = 0; round < rounds; round += 1) {
    for (const [side, job] of jobs.entries()) {
      const result = await load(perRound, concurrency, (i) => job(round * perRound + i));
      merged[side]!.latencies.push(...result.latencies);
      merged[side]!.wallMs += result.wallMs;
    }
  }
  return merged;
}

export function fmt(ms: number): string {
  return `${ms.toFixed(2)} ms`;
}

export function line(name: string, figures: Record<string, string | number>): void {
  console.log(
    `${name}: ${Object.entries(figures)
      .map(([k, v]) => `${k}=${v}`)
      .join('  ')}`,
  );
}

/** What a printed line says against its goal. */
export function verdict(met: boolean): 'met' | 'not met' {
  return met ? 'met' : 'not met';
}
