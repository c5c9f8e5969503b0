/**
 * Brings the docs' screenshots up to date from the browser suites' last run:
 *
 *   node dist/scripts/run-tests.js dist/test/browser     (saves .data/screenshots/<name>.png)
 *   node dist/scripts/screenshots.js [--check]
 *
 * Every image that README.md and docs/*.md show from docs/screenshots/ is copied there from
 * .data/screenshots/. A shown image that the run did not save is an error (its test was renamed or
 * no longer takes it), as is an image in docs/screenshots/ that no page shows. --check only reports.
 */
import { copyFileSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { answerHelp } from './runtime/command-line.js';

const USAGE = `usage: node dist/scripts/screenshots.js [--check]

Copies each screenshot that README.md and docs/*.md show (docs/screenshots/<name>.png) from the
browser suites' last run (.data/screenshots/<name>.png). Run the browser suites first:
  node dist/scripts/run-tests.js dist/test/browser
--check  report what is missing or unused, copy nothing`;

const IMAGE = /screenshots\/([\w.-]+\.png)/g;

/** The screenshot files the Markdown pages under `root` show, by name. */
export function shownScreenshots(root: string): string[] {
  const pages = [
    path.join(root, 'README.md'),
    ...readdirSync(path.join(root, 'docs'))
      .filter((file) => file.endsWith('.md'))
      .map((file) => path.join(root, 'docs', file)),
  ];
  const names = new Set<string>();
  for (const page of pages) {
    for (const match of readFileSync(page, 'utf8').matchAll(IMAGE)) {
      names.add(match[1]!);
    }
  }
  return [...names].sort();
}

function main(): void {
  answerHelp(USAGE);
  const root = process.cwd();
  const check = process.argv.includes('--check');
  const from = path.join(root, '.data', 'screenshots');
  const to = path.join(root, 'docs', 'screenshots');
  const shown = shownScreenshots(root);
  const missing = shown.filter((name) => !existsSync(path.join(from, name)));
  const unused = readdirSync(to).filter((name) => name.endsWith('.png') && !shown.includes(name));
  if (!check && missing.length === 0) {
    for (const name of shown) {
      copyFileSync(path.join(from, name), path.join(to, name));
    }
    console.log(`copied ${shown.length} screenshots from .data/screenshots to docs/screenshots`);
  }
  for (const name of missing) {
    console.error(`not saved by the browser suites' last run: .data/screenshots/${name}`);
  }
  for (const name of unused) {
    console.error(`shown by no page: docs/screenshots/${name}`);
  }
  if (missing.length > 0 || unused.length > 0) {
    process.exit(1);
  }
}

main();
