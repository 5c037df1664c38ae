#!/usr/bin/env node
/**
 * `npx identity-service <command>`: the admin CLI (scripts/cli.ts) run on the Bun that npm installed
 * as a dependency, so a machine with only Node and npm needs nothing else. Unlike `npm run cli`, npx
 * prints no header of its own: standard output carries the command's JSON alone.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The Bun binary of the `bun` package (bin/bun.exe on every platform), wherever npm put it. */
function bunBinary() {
  if (process.versions.bun) return process.execPath;
  try {
    return join(dirname(createRequire(import.meta.url).resolve('bun/package.json')), 'bin', 'bun.exe');
  } catch {
    return undefined;
  }
}

const bun = bunBinary();
if (!bun) {
  console.error('identity-service: Bun is missing from node_modules; run `npm install` in the project first');
  process.exit(1);
}
const run = spawnSync(bun, [join(root, 'scripts', 'cli.ts'), ...process.argv.slice(2)], { stdio: 'inherit' });
if (run.error) {
  console.error(`identity-service: cannot run ${bun}: ${run.error.message}`);
  process.exit(1);
}
if (run.signal) process.kill(process.pid, run.signal);
process.exit(run.status ?? 1);
