import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from '@jest/globals';

/** Folders that hold no Markdown of ours: dependencies, builds, local data, git's own. */
const SKIPPED = new Set(['node_modules', 'dist', '.data', '.git']);

/** The repository's root: the nearest folder above this (compiled) file with package.json and README.md. */
function repositoryRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!(existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'README.md')))) {
    const parent = path.dirname(dir);
    if (parent === dir) {
      throw new Error('no repository root above ' + fileURLToPath(import.meta.url));
    }
    dir = parent;
  }
  return dir;
}

/** Every `.md` file under `root`, relative to it; symbolic links to folders are not followed. */
export function markdownFiles(root: string, dir = ''): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const relative = path.join(dir, entry.name);
    if (entry.isDirectory() && !SKIPPED.has(entry.name)) {
      found.push(...markdownFiles(root, relative));
    } else if (entry.isFile() && entry.name.endsWith('.md')) {
      found.push(relative);
    }
  }
  return found.sort();
}

/** The text outside fenced code blocks. */
function withoutFences(markdown: string): string {
  return markdown.replace(/^[ \t]*(```|~~~)[^\n]*\n[\s\S]*?^[ \t]*\1[^\n]*$/gm, '');
}

/** The text outside code, fenced or inline: links there are examples. */
function prose(markdown: string): string {
  return withoutFences(markdown).replace(/`[^`\n]*`/g, '``');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, each space a '-'. */
export function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a Markdown file's headings, repeated headings numbered as GitHub does (-1, -2, …). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const [, text] of withoutFences(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(text!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** Each relative link (`[text](path)`, `[text](path#anchor)`, images too) of `file` that does not resolve. */
export function brokenLinks(root: string, file: string): string[] {
  const markdown = readFileSync(path.join(root, file), 'utf8');
  const problems: string[] = [];
  for (const [, target] of prose(markdown).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target!)) {
      continue; // http(s), mailto and other schemes: not checked here
    }
    const [rawPath, anchor] = target!.split('#', 2) as [string, string | undefined];
    const linkPath = decodeURIComponent(rawPath);
    const resolved =
      linkPath === ''
        ? path.join(root, file)
        : path.join(linkPath.startsWith('/') ? root : path.dirname(path.join(root, file)), linkPath);
    if (!existsSync(resolved)) {
      problems.push(`${file}: ${target} (no such file)`);
      continue;
    }
    if (anchor !== undefined && resolved.endsWith('.md') && statSync(resolved).isFile()) {
      if (!anchors(readFileSync(resolved, 'utf8')).has(decodeURIComponent(anchor))) {
        problems.push(`${file}: ${target} (no heading #${anchor} in ${path.relative(root, resolved)})`);
      }
    }
  }
  return problems;
}

describe('Markdown links', () => {
  const root = repositoryRoot();

  it("finds the repository's Markdown: the README, CONTRIBUTING and the docs pages", () => {
    const files = markdownFiles(root);
    expect(files).toEqual(expect.arrayContaining(['README.md', 'CONTRIBUTING.md', path.join('docs', 'api.md')]));
    expect(files.some((file) => file.split(path.sep).some((part) => SKIPPED.has(part)))).toBe(false);
  });

  it('every relative link of every Markdown file points at a file, and every anchor at a heading', () => {
    const problems = markdownFiles(root).flatMap((file) => brokenLinks(root, file));
    expect(problems).toEqual([]);
  });

  describe('the checker', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'markdown-links-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it("computes GitHub's anchors", () => {
      expect(slug('Payments with Stripe (going live)')).toBe('payments-with-stripe-going-live');
      expect(slug('Tests: stripe-mock')).toBe('tests-stripe-mock');
      expect(slug('The `agentsite-check` CLI')).toBe('the-agentsite-check-cli');
      expect(slug("What it doesn't do, and why")).toBe('what-it-doesnt-do-and-why');
    });

    it('reports a missing file and a missing anchor, and passes good links, external ones and code', () => {
      writeFileSync(path.join(dir, 'b.md'), '# B\n\n## Part one\n\n## Part one\n\n```md\n## Not a heading\n```\n');
      writeFileSync(
        path.join(dir, 'a.md'),
        [
          '# A',
          '[ok](b.md) [ok](b.md#part-one) [second](b.md#part-one-1) [self](#a) ![img](b.md)',
          '[web](https://example.com/x.md) [mail](mailto:a@example.com) `[code](missing.md)`',
          '```sh',
          '[in a block](missing.md)',
          '```',
          '[gone](missing.md) [bad anchor](b.md#part-two) [fenced](b.md#not-a-heading) [self](#nowhere)',
        ].join('\n'),
      );
      expect(brokenLinks(dir, 'a.md')).toEqual([
        'a.md: missing.md (no such file)',
        'a.md: b.md#part-two (no heading #part-two in b.md)',
        'a.md: b.md#not-a-heading (no heading #not-a-heading in b.md)',
        'a.md: #nowhere (no heading #nowhere in a.md)',
      ]);
    });
  });
});
