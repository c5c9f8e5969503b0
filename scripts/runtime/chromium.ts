/**
 * The Chromium that the browser tests drive, obtained once per machine like the Temporal CLI:
 * CHROMIUM_PATH, else the one found before (remembered in the tool cache), else Playwright's usual
 * download, else a Chromium already installed, else Debian's `chromium` package when running as
 * root, else an error that says what to run. Never a silent skip.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { executable, onPath } from './executables.js';
import { toolCacheDir } from './tool-cache.js';

const execFileAsync = promisify(execFile);
const DOWNLOAD_TIMEOUT_MS = 10 * 60_000;
const APT_TIMEOUT_MS = 15 * 60_000;
const SYSTEM_NAMES = ['chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome'];

type Log = (line: string) => void;

export class ChromiumUnavailableError extends Error {}

/** The file that remembers which Chromium this machine uses. */
export function rememberedChromiumFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(toolCacheDir(env), 'chromium-path');
}

function playwrightCli(): string {
  const require = createRequire(import.meta.url);
  return path.join(path.dirname(require.resolve('playwright-core/package.json')), 'cli.js');
}

async function playwrightChromium(): Promise<string> {
  const { chromium } = await import('playwright-core');
  return chromium.executablePath();
}

function remember(file: string, env: NodeJS.ProcessEnv): string {
  const memo = rememberedChromiumFile(env);
  mkdirSync(path.dirname(memo), { recursive: true });
  writeFileSync(memo, `${file}\n`);
  return file;
}

function systemChromium(env: NodeJS.ProcessEnv): string | undefined {
  for (const name of SYSTEM_NAMES) {
    const found = onPath(name, env);
    if (found !== undefined) {
      return found;
    }
  }
  return undefined;
}

async function download(log: Log): Promise<string | undefined> {
  log('downloading Chromium with Playwright (npx playwright-core install chromium)');
  try {
    await execFileAsync(process.execPath, [playwrightCli(), 'install', 'chromium'], { timeout: DOWNLOAD_TIMEOUT_MS });
  } catch (err) {
    const first = String((err as { stderr?: string }).stderr ?? err).split('\n')[0];
    log(`the download failed (${first}); trying other sources`);
    return undefined;
  }
  const file = await playwrightChromium();
  return executable(file) ? file : undefined;
}

async function aptInstall(log: Log, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (process.getuid?.() !== 0 || onPath('apt-get', env) === undefined) {
    return undefined;
  }
  const install = (): Promise<unknown> =>
    execFileAsync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], {
      timeout: APT_TIMEOUT_MS,
      env: { ...env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  log("installing Debian's chromium package (apt-get install chromium)");
  try {
    await install();
  } catch {
    log('apt-get install failed; updating the package lists and trying again');
    try {
      await execFileAsync('apt-get', ['update'], { timeout: APT_TIMEOUT_MS });
      await install();
    } catch (err) {
      log(`apt-get could not install chromium: ${String(err).split('\n')[0]}`);
      return undefined;
    }
  }
  return systemChromium(env);
}

export async function ensureChromium(log: Log, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const configured = env.CHROMIUM_PATH?.trim();
  if (configured) {
    if (!executable(configured)) {
      throw new ChromiumUnavailableError(`CHROMIUM_PATH=${configured} is not an executable file`);
    }
    return configured;
  }
  const memo = rememberedChromiumFile(env);
  if (existsSync(memo)) {
    const remembered = readFileSync(memo, 'utf8').trim();
    if (executable(remembered)) {
      return remembered;
    }
  }
  const ownBrowser = await playwrightChromium();
  if (executable(ownBrowser)) {
    return remember(ownBrowser, env);
  }
  const found = (await download(log)) ?? systemChromium(env) ?? (await aptInstall(log, env));
  if (found !== undefined) {
    log(`Chromium ready at ${found}`);
    return remember(found, env);
  }
  throw new ChromiumUnavailableError(
    'The browser tests need Chromium and none could be obtained. Run one of:\n' +
      '  npx playwright-core install chromium      (downloads it)\n' +
      '  sudo apt-get install -y chromium          (Debian / Ubuntu)\n' +
      'or set CHROMIUM_PATH to a Chromium or Chrome executable, then run the tests again.',
  );
}
