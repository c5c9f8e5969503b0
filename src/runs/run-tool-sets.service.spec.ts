import { describe, expect, it } from '@jest/globals';
import { standIn } from '../common/testing/stand-in.js';
import type { RunToolSet } from '../../workflows/contracts.js';
import { canonicalJson, sha256Hex } from './run-tool-sets.js';
import type { RunToolSetsRepository } from './run-tool-sets.repository.js';
import { RunToolSetsService } from './run-tool-sets.service.js';
import { FakeRunToolSetsRepository } from './testing/fake-run-tool-sets.repository.js';

const SET: RunToolSet = {
  system: 'You triage.',
  tools: [
    {
      name: 'notes__create',
      description: 'Creates a note',
      input_schema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
      siteId: 'site-1',
      siteName: 'Notes',
      tool: 'create',
      scope: 'write',
    },
  ],
};

function service(): { toolSets: RunToolSetsService; repository: FakeRunToolSetsRepository } {
  const repository = new FakeRunToolSetsRepository();
  return { toolSets: new RunToolSetsService(standIn<RunToolSetsRepository>(repository)), repository };
}

describe('canonicalJson', () => {
  it('is one text whatever the order of the keys, nested ones included; arrays keep their order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 0 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[2,{"y":0,"z":1}]},"b":1}',
    );
    expect(canonicalJson([2, 1])).not.toBe(canonicalJson([1, 2]));
  });
});

describe('RunToolSetsService', () => {
  it('stores a set once by the sha256 of its canonical JSON and names it on each run', async () => {
    const { toolSets, repository } = service();
    const hash = await toolSets.attach('run-1', SET);
    const reordered = { tools: SET.tools.map((t) => ({ ...t })).reverse(), system: SET.system };
    expect(await toolSets.attach('run-2', reordered)).toBe(hash);
    expect(hash).toBe(sha256Hex(canonicalJson(SET)));
    expect(repository.inserts).toBe(1);
    expect([...repository.runs.values()]).toEqual([hash, hash]);
  });

  it('reads a set by its hash once, then from memory', async () => {
    const { repository } = service();
    const content = canonicalJson(SET);
    const hash = sha256Hex(content);
    repository.sets.set(hash, content);
    const { toolSets } = { toolSets: new RunToolSetsService(standIn<RunToolSetsRepository>(repository)) };
    expect(await toolSets.read(hash)).toEqual(SET);
    expect(await toolSets.read(hash)).toEqual(SET);
    expect(repository.reads).toBe(1);
  });

  it('refuses a set whose content does not hash to its name, one that is gone, and a malformed name', async () => {
    const { toolSets, repository } = service();
    const hash = sha256Hex(canonicalJson(SET));
    repository.sets.set(hash, canonicalJson({ ...SET, system: 'Something else.' }));
    await expect(toolSets.read(hash)).rejects.toThrow('does not match its hash');
    await expect(toolSets.read('b'.repeat(64))).rejects.toThrow('is not stored');
    await expect(toolSets.read('../x')).rejects.toThrow('malformed');
  });
});
