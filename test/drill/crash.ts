import { expect } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { busFromEnv } from '../../scripts/drill/bus-from-env.ts';

const ROOT = join(import.meta.dir, '..', '..');

const lines = (file: string) =>
  existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];

async function until(cond: () => boolean, ms: number, what: string) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function spawnConsumer(env: Record<string, string>) {
  return Bun.spawn([process.execPath, join(ROOT, 'scripts/drill/consumer.ts')], {
    env: { ...process.env, ...env },
    stdout: 'pipe',
    stderr: 'inherit',
  });
}

/**
 * Publishes `n` messages, starts a consumer process, SIGKILLs it mid-stream, starts another, and checks
 * that every message was handled at least once. Returns what it saw, for the report.
 */
export async function crashDrill(options: {
  n: number;
  env: Record<string, string>;
  out: string;
  /** How the messages are published. @default through the drill's own bus, from `env` */
  publish?: (ids: string[]) => Promise<void>;
  /** Called before the consumer starts (PGlite: the publisher must let go of the data directory). */
  beforeConsume?: () => Promise<void>;
}): Promise<{ handled: number; duplicates: number; killedAt: number }> {
  const ids = Array.from({ length: options.n }, (_, i) => `drill-${i}`);
  await (options.publish ?? ((all) => publishFromEnv(options.env, all)))(ids);
  await options.beforeConsume?.();
  const env = { ...options.env, DRILL_OUT: options.out };
  const first = spawnConsumer(env);
  await until(
    () => lines(options.out).length >= options.n / 4,
    60_000,
    'the first consumer to handle a quarter',
  );
  first.kill('SIGKILL');
  await first.exited;
  const killedAt = lines(options.out).length;
  expect(killedAt).toBeLessThan(options.n);
  const second = spawnConsumer(env);
  try {
    await until(
      () => new Set(lines(options.out)).size >= options.n,
      90_000,
      'every message after the restart',
    );
  } finally {
    second.kill('SIGTERM');
    await second.exited;
  }
  const seen = lines(options.out);
  const unique = new Set(seen);
  for (const id of ids) expect(unique.has(id)).toBe(true);
  return { handled: unique.size, duplicates: seen.length - unique.size, killedAt };
}

/** Publishes the ids on DRILL_TOPIC through a bus opened from the drill variables, then closes it. */
async function publishFromEnv(env: Record<string, string>, ids: string[]) {
  const { storage, bus } = await busFromEnv(env);
  const topic = env.DRILL_TOPIC ?? 'drill';
  for (let i = 0; i < ids.length; i += 100) {
    await Promise.all(ids.slice(i, i + 100).map((id) => bus.publish(topic, [{ id, payload: { id } }])));
  }
  await bus.close();
  await storage.close();
}
