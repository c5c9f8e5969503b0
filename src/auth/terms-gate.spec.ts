import { describe, expect, it } from '@jest/globals';
import { PATH_METADATA } from '@nestjs/common/constants.js';
import { AppModule } from '../app.module.js';
import { TERMS_REQUIRED } from './decorators.js';

/**
 * The areas API.md gates behind the terms of service (first path segment after /api), and the two that
 * give an MCP client access to them (its consent, the connected apps): /mcp itself refuses a caller who
 * has not accepted the terms.
 */
const GATED_AREAS = [
  'vault',
  'sessions',
  'agents',
  'runs',
  'workspaces',
  'invitations',
  'billing',
  'mcp-consent',
  'connected-apps',
  'approvals',
];

/** Every controller the application registers, found through the module tree as Nest does. */
function controllersOf(root: unknown): Array<abstract new (...args: never[]) => unknown> {
  const seen = new Set<unknown>();
  const controllers = new Set<abstract new (...args: never[]) => unknown>();
  const visit = (entry: unknown): void => {
    const module = (entry as { module?: unknown })?.module ?? entry;
    if (typeof module !== 'function' || seen.has(module)) {
      return;
    }
    seen.add(module);
    for (const controller of (Reflect.getMetadata('controllers', module) ?? []) as Array<
      abstract new (...args: never[]) => unknown
    >) {
      controllers.add(controller);
    }
    const imports = [
      ...((Reflect.getMetadata('imports', module) ?? []) as unknown[]),
      ...(((entry as { imports?: unknown[] }).imports ?? []) as unknown[]),
    ];
    imports.forEach(visit);
  };
  visit(root);
  return [...controllers];
}

describe('terms gate', () => {
  it('every controller of a gated area, and only those, is marked @TermsRequired()', () => {
    const controllers = controllersOf(AppModule);
    expect(controllers.length).toBeGreaterThanOrEqual(12);
    for (const controller of controllers) {
      const paths = [Reflect.getMetadata(PATH_METADATA, controller) as string | string[]].flat();
      const area = (paths[0] ?? '').replace(/^\/+/, '').split('/')[0]!.toLowerCase();
      const gated = Reflect.getMetadata(TERMS_REQUIRED, controller) === true;
      expect({ controller: controller.name, gated }).toEqual({
        controller: controller.name,
        gated: GATED_AREAS.includes(area),
      });
    }
  });
});
