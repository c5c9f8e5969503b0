/**
 * Jest setupFiles: each jest worker takes the ports of its servers (freePort) from its own range,
 * 10000–19999 split by JEST_WORKER_ID, below the kernel's ephemeral ports (32768 on) and the range
 * scripts/runtime/temporal-cluster.ts uses (20000–31999). Two suites running side by side cannot be
 * handed the same port between one's freePort() and its server's listen, and no outgoing connection
 * takes it meanwhile. See freePort in scripts/runtime/processes.ts.
 */
const WORKER_PORTS = 1_250;
const worker = Number(process.env.JEST_WORKER_ID ?? '1');
if (Number.isInteger(worker) && worker >= 1 && worker <= 8) {
  const first = 10_000 + (worker - 1) * WORKER_PORTS;
  process.env.AGENTSITE_PORT_RANGE = `${first}-${first + WORKER_PORTS - 1}@${process.pid}`;
}
