export type Env = Record<string, string | undefined>;

/** Typed reads of environment variables; each problem is collected (naming its variable), not thrown. */
export class EnvReader {
  constructor(
    private readonly env: Env,
    private readonly problems: string[],
  ) {}

  str(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const raw = this.str(name);
    if (raw === undefined) {
      return fallback;
    }
    const value = Number(raw);
    if (!/^-?\d+$/.test(raw) || value < min || value > max) {
      this.problems.push(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
      return fallback;
    }
    return value;
  }

  bool(name: string, fallback: boolean): boolean {
    const raw = this.str(name)?.toLowerCase();
    if (raw === undefined) {
      return fallback;
    }
    if (['1', 'true', 'yes', 'on'].includes(raw)) {
      return true;
    }
    if (['0', 'false', 'no', 'off'].includes(raw)) {
      return false;
    }
    this.problems.push(`${name} must be true or false, got "${raw}"`);
    return fallback;
  }

  url(name: string, protocols: string[]): string | undefined {
    const raw = this.str(name);
    if (raw === undefined) {
      return undefined;
    }
    try {
      const parsed = new URL(raw);
      if (!protocols.includes(parsed.protocol)) {
        this.problems.push(`${name} must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
      }
    } catch {
      this.problems.push(`${name} is not a valid URL`);
    }
    return raw;
  }

  list(name: string): string[] {
    return (this.str(name) ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  }

  oneOf<T extends string>(name: string, values: readonly T[], fallback: T): T {
    const raw = this.str(name);
    if (raw === undefined) {
      return fallback;
    }
    if (!(values as readonly string[]).includes(raw)) {
      this.problems.push(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
      return fallback;
    }
    return raw as T;
  }
}
