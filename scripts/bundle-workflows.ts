/**
 * Build step: bundles dist/workflows into dist/workflow-bundle.js for the worker, and again with the
 * tracing interceptors into dist/workflow-bundle-traced.js (OTEL_EXPORTER_OTLP_ENDPOINT set). Fails loudly.
 */
import { readdirSync, renameSync, statSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { FAILURE_CONVERTER_PATH } from '../src/temporal/payload-codec.js';
import { TRACED_WORKFLOW_BUNDLE_PATH, TRACING_WORKFLOW_INTERCEPTOR_MODULES } from '../src/temporal/temporal-tracing.js';
import { WORKFLOW_BUNDLE_PATH, WORKFLOWS_PATH } from '../src/temporal/worker-factory.js';
import { answerHelp } from './runtime/command-line.js';

answerHelp(
  'usage: node dist/scripts/bundle-workflows.js   (a step of npm run build)\n' +
    'Bundles dist/workflows into dist/workflow-bundle.js and dist/workflow-bundle-traced.js for the worker.',
);

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : statSync(full).mtimeMs);
  }
  return newest;
}

async function bundle(target: string, inputs: number, workflowInterceptorModules: string[]): Promise<void> {
  if (existsSync(target) && statSync(target).mtimeMs > inputs) {
    return;
  }
  const started = Date.now();
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    workflowInterceptorModules,
    // Our workflow modules are evaluated once per worker thread, when the reusable V8 context is made,
    // instead of once per cached workflow: with reuseV8Context each workflow evaluates, for itself,
    // every module first imported after it was created. They hold no state of a workflow's own (only
    // functions, handler and activity definitions, constants), which is what preloading asks. Saves
    // the worker memory for each cached workflow (benchmark 5).
    preloadModules: [WORKFLOWS_PATH],
    failureConverterPath: FAILURE_CONVERTER_PATH,
    logger: new DefaultLogger('WARN'),
  });
  // Written aside and renamed: a worker starting meanwhile (npm run dev, a test) reads the old or the
  // new bundle whole, never a half-written one.
  const partial = `${target}.${process.pid}.tmp`;
  writeFileSync(partial, code);
  renameSync(partial, target);
  console.log(`${path.basename(target)} written (${Math.round(code.length / 1024)} KiB, ${Date.now() - started} ms)`);
}

async function main(): Promise<void> {
  const distRoot = path.dirname(WORKFLOW_BUNDLE_PATH);
  // The bundle covers workflows/ and what it imports (activities' types and @temporalio/*), and the
  // failure converter (failure messages encoded, so the codec encrypts them); the traced one also
  // the interceptor modules (ours is in workflows/, Temporal's comes with package-lock.json).
  const inputs = Math.max(
    newestMtime(path.join(distRoot, 'workflows')),
    statSync(FAILURE_CONVERTER_PATH).mtimeMs,
    statSync(path.resolve('package-lock.json')).mtimeMs,
    // and this script's own options
    statSync(fileURLToPath(import.meta.url)).mtimeMs,
  );
  await bundle(WORKFLOW_BUNDLE_PATH, inputs, []);
  await bundle(TRACED_WORKFLOW_BUNDLE_PATH, inputs, TRACING_WORKFLOW_INTERCEPTOR_MODULES);
}

main().catch((err: unknown) => {
  console.error('bundling workflows failed:', err);
  process.exit(1);
});
