/**
 * No cycle between feature folders, run by `npm run lint:deps` after .dependency-cruiser.cjs. Its own
 * configuration because a folder rule sees every file of a folder: the specs, which may reach across
 * for their fixtures, are left out of this cruise (they stay in the other one's file rules).
 */
const base = require('./.dependency-cruiser.cjs');

module.exports = {
  forbidden: [
    {
      name: 'no-circular-features',
      severity: 'error',
      comment:
        'No cycle between feature folders (src/<feature>/): a feature builds on the features it imports, and ' +
        'a route that drives a feature built on it lives in that feature (CONTRIBUTING.md#where-to-look; docs/architecture.md#feature-map).',
      scope: 'folder',
      // Folder names carry no trailing slash: 'src/vault', 'src/vault/dto'.
      from: { path: '^src/[^/]+' },
      to: { path: '^src/[^/]+', circular: true },
    },
  ],
  options: {
    ...base.options,
    exclude: { path: ['^dist/', '\\.(e2e-)?spec\\.ts$'] },
  },
};
