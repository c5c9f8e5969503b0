/** What every operator command does with its command line before anything else: --help, and .env. */
import { existsSync } from 'node:fs';
import path from 'node:path';

/** Prints the usage and exits 0 when the command line asks for help (--help or -h). */
export function answerHelp(usage: string, argv: string[] = process.argv.slice(2)): void {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(usage);
    process.exit(0);
  }
}

/**
 * Reads `.env` from the directory the command runs in (npm runs it in the project root) into
 * process.env, as docker compose reads it for the containers: Node's own parser (process.loadEnvFile),
 * and a variable set in the environment, even empty, wins over the file. Says in one line which file
 * it read; returns its path, or undefined when there is none.
 */
export function loadDotEnv(say: (line: string) => void, dir = process.cwd()): string | undefined {
  const file = path.resolve(dir, '.env');
  if (!existsSync(file)) {
    return undefined;
  }
  process.loadEnvFile(file);
  say(`settings read from ${file} (the environment wins over it)`);
  return file;
}
