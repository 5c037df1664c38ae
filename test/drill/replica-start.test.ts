import { describe, expect, it } from 'bun:test';
import { replicaDrill } from '../../scripts/drill/replicas.ts';
import { freePort } from '../../scripts/free-port.ts';

describe('the replica drill', () => {
  it('fails at once, with the replica’s last lines, when a replica exits while starting', async () => {
    // Nothing listens on this port: the replica stops on start-up, saying it cannot reach Postgres.
    const databaseUrl = `postgres://postgres@127.0.0.1:${await freePort()}/test`;
    const started = Date.now();
    const error = await replicaDrill({ databaseUrl, replicas: 2, webhooks: 1, events: 1 }).then(
      () => new Error('the drill succeeded'),
      (e: unknown) => e as Error,
    );
    expect(error.message).toContain('replica 0 exited while starting (1)');
    expect(error.message).toContain('cannot reach Postgres');
    // Not the 120 s a replica is given to answer /healthz.
    expect(Date.now() - started).toBeLessThan(30_000);
  }, 60_000);
});
