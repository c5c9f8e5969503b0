/**
 * The layering rules `npm run lint` checks (CONVENTIONS, habit 17). No known violations are kept:
 * any violation fails the lint.
 */
/** A spec may reach across for its fixtures; the rules are about the code that ships. */
const NOT_SPEC = '\\.(e2e-)?spec\\.ts$';
// The cycle rule between feature folders is in .dependency-cruiser-features.cjs: a folder rule sees
// every file of a folder, and specs (which may reach across) must be left out of the cruise for it.

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycle between files: a cycle makes load order matter and hides the layering.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'workflows-deterministic-imports',
      severity: 'error',
      comment:
        'Workflow code runs in the deterministic sandbox: it imports only workflows/*, @temporalio/workflow ' +
        'and types from activities/ (CONVENTIONS, import direction).',
      from: { path: '^workflows/', pathNot: NOT_SPEC },
      to: { pathNot: ['^workflows/', '^activities/', '^node_modules/@temporalio/workflow/'] },
    },
    {
      name: 'workflows-activities-types-only',
      severity: 'error',
      comment: 'Workflows call activities through proxyActivities: from activities/ they import types only.',
      from: { path: '^workflows/' },
      to: { path: '^activities/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'activities-not-src',
      severity: 'error',
      comment: 'Activities depend on ports that src/worker.ts fills, never on src/ itself.',
      from: { path: '^activities/', pathNot: NOT_SPEC },
      to: { path: '^src/' },
    },
    {
      name: 'no-foreign-repository',
      severity: 'error',
      comment:
        "A feature reads another feature's data through that feature's module and services, never its repository.",
      from: { path: '^src/([^/]+)/' },
      to: { path: '^src/([^/]+)/.+\\.repository\\.ts$', pathNot: '^src/$1/' },
    },
    {
      name: 'no-foreign-entity',
      severity: 'error',
      comment:
        "A feature uses another feature's rows through that feature's services: it may name another feature's " +
        'entity as a type (the shape a service returns), never use it as a value. Repositories are the exception: ' +
        "a query may join another feature's table (a run's agent, a workspace's owner), and that SQL lives in " +
        'the repository of the feature that asks.',
      from: { path: '^src/([^/]+)/', pathNot: [NOT_SPEC, '\\.repository\\.ts$'] },
      to: { path: '^src/([^/]+)/.+\\.entity\\.ts$', pathNot: '^src/$1/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'features-not-into-database',
      severity: 'error',
      comment:
        'src/database/ (data source, migrations) is wired by the entry points and scripts; features use ' +
        'the helpers in src/common/database/ and the DataSource Nest injects.',
      from: { path: '^src/[^/]+/', pathNot: ['^src/database/', NOT_SPEC] },
      to: { path: '^src/database/' },
    },
    {
      name: 'database-imports-no-feature',
      severity: 'error',
      comment: 'The data source finds entities through the feature modules (autoLoadEntities), not by importing them.',
      // A data migration may use the code of the data it rewrites (the vault re-seal uses its cipher).
      from: { path: '^src/database/', pathNot: '^src/database/migrations/' },
      to: { path: '^src/', pathNot: ['^src/(database|common|config)/'] },
    },
    {
      name: 'common-imports-no-feature',
      severity: 'error',
      comment: 'src/common/ is below every feature: it imports only src/common/ and src/config/.',
      from: { path: '^src/common/', pathNot: NOT_SPEC },
      to: { path: '^src/', pathNot: ['^src/(common|config)/'] },
    },
  ],
  options: {
    doNotFollow: { path: ['node_modules'] },
    exclude: { path: ['^dist/'] },
    // Type-only imports count (a type cycle is still a cycle), and are marked for the workflows rule.
    tsPreCompilationDeps: true,
    // ESM TypeScript imports name the emitted .js file: dependency-cruiser resolves it to the .ts source.
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
