import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';

/** The pinned Node of the project (.node-version; the image's, checked in test/e2e/runtime-pins). */
const PINNED = readFileSync(path.resolve('.node-version'), 'utf8').trim();
const major = (version: string): number => Number(version.split('.')[0]);

describe('the Node the tests run on', () => {
  it('is the pinned Node whenever the machine has an older one (scripts/pinned-node.mjs moved the run onto it)', () => {
    // The launcher records the machine's own Node for its children; a run that did not go through it
    // (jest started directly on an older Node) has only this process's version and fails here.
    const machine = process.env.AGENTSITE_MACHINE_NODE ?? process.versions.node;
    const expected = major(machine) < major(PINNED) ? PINNED : machine;
    expect(process.versions.node).toBe(expected);
    expect(major(process.versions.node)).toBeGreaterThanOrEqual(major(PINNED));
  });
});
