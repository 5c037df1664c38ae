/**
 * Before and after in one run: `npm run bench:compare -- <git ref> [section ...] [--turns 2]` checks the
 * ref out in a temporary worktree (sharing this checkout's node_modules) and runs the same benchmark
 * sections there and here in turns (before, after, before, after...), so both see the same machine in the
 * same minutes. Prints each turn's tables under a heading naming the commit. Sections as for
 * `npm run bench` (default: password oauth2, the sign-in and client_credentials figures).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './processes.ts';

const args = process.argv.slice(2);
const turnsAt = args.indexOf('--turns');
const turns = turnsAt >= 0 ? Number(args[turnsAt + 1]) : 2;
const plain = args.filter((a, i) => !a.startsWith('--') && i !== turnsAt + 1);
const [ref, ...named] = plain;
if (!ref || !Number.isInteger(turns) || turns < 1) {
  console.error('usage: npm run bench:compare -- <git ref> [section ...] [--turns 2]');
  process.exit(2);
}
const sections = named.length ? named : ['password', 'oauth2'];
const git = (...a: string[]) => execFileSync('git', a, { cwd: ROOT, encoding: 'utf8' }).trim();
const before = git('rev-parse', '--short', ref);
const after = `${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain') ? ' (with uncommitted changes)' : ''}`;

const dir = mkdtempSync(join(tmpdir(), 'bench-before-'));
git('worktree', 'add', '--quiet', '--detach', dir, ref);
try {
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  for (let turn = 1; turn <= turns; turn++)
    for (const [label, cwd] of [
      [`before: ${before}`, dir],
      [`after: ${after}`, ROOT],
    ] as const) {
      console.log(`\n## Turn ${turn}, ${label}\n`);
      const run = spawnSync(process.execPath, ['scripts/bench/index.ts', ...sections], {
        cwd,
        stdio: ['ignore', 'inherit', 'inherit'],
        env: process.env,
      });
      if (run.status !== 0) throw new Error(`the ${label} run exited with ${run.status}`);
    }
} finally {
  git('worktree', 'remove', '--force', dir);
  rmSync(dir, { recursive: true, force: true });
}
