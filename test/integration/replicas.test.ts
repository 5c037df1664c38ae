import { describe, expect, it } from 'bun:test';
import {
  type ReplicaDrillResult,
  receiverFaults,
  replicaDrill,
  verdictLine,
} from '../../scripts/drill/replicas.ts';
import { privateNats, privatePostgres } from '../../scripts/drill/services.ts';
import { DATABASE_URL, NATS_URL } from './support.ts';

/** Three replicas of the real entry on one Postgres: the checks of the replica drill, at a test's scale. */
function judge(bus: string, r: ReplicaDrillResult) {
  console.log(verdictLine(`${bus}, undisturbed`, r.steady));
  const killed = r.disrupted!;
  console.log(verdictLine(`${bus}, ${killed.disruption}`, killed));
  // Undisturbed: nothing lost, nothing twice, and no replica idle.
  expect(r.steady.lost).toBe(0);
  expect(r.steady.duplicates).toBe(0);
  for (const n of r.steady.byReplica) expect(n).toBeGreaterThan(0);
  // With a replica killed mid-burst: every event answered 201 still reaches every webhook.
  expect(killed.published).toBeGreaterThan(0);
  expect(killed.lost).toBe(0);
  // Replicas started together apply the migrations once.
  expect(r.migrationsAppliedBy).toBe(1);
  // A key rotated through the CLI is refused by every replica within the 5 s key cache (and some slack).
  expect(r.revokedKeyRefusedAfterMs).toBeLessThan(8000);
}

const options = { databaseUrl: DATABASE_URL, replicas: 3, webhooks: 2, events: 600, log: console.log };

describe('three replicas on one Postgres', () => {
  it('with the Postgres-backed queue: shared consumers, nothing lost when one is killed', async () => {
    judge('pg-queue', await replicaDrill(options));
  }, 300_000);

  it('with JetStream: shared consumers, nothing lost when one is killed', async () => {
    judge('jetstream', await replicaDrill({ ...options, natsUrl: NATS_URL }));
  }, 300_000);
});

describe('three replicas while what they stand on fails', () => {
  it('JetStream: NATS restarted mid-burst loses nothing', async () => {
    const nats = await privateNats();
    try {
      const r = await replicaDrill({
        ...options,
        natsUrl: nats.url,
        disruption: { name: 'NATS restarted', run: () => nats.restart() },
      });
      console.log(verdictLine('NATS restarted', r.disrupted!));
      expect(r.steady.lost).toBe(0);
      expect(r.disrupted!.lost).toBe(0);
    } finally {
      await nats.stop();
    }
  }, 400_000);

  it('pg-queue: Postgres restarted mid-burst loses nothing', async () => {
    const pg = await privatePostgres();
    try {
      const r = await replicaDrill({
        ...options,
        databaseUrl: pg.url,
        disruption: { name: 'Postgres restarted', run: () => pg.restart() },
      });
      console.log(verdictLine('Postgres restarted', r.disrupted!));
      expect(r.steady.lost).toBe(0);
      expect(r.disrupted!.lost).toBe(0);
    } finally {
      await pg.stop();
    }
  }, 400_000);

  it('receivers that hang, reset the connection or answer slowly still get every event', async () => {
    const r = await replicaDrill({ ...options, disruption: null, fault: receiverFaults, timeoutMs: 300_000 });
    console.log(verdictLine(`receiver faults ${JSON.stringify(r.faults)}`, r.steady));
    expect(r.faults.hang).toBeGreaterThan(0);
    expect(r.faults.reset).toBeGreaterThan(0);
    expect(r.faults.slow).toBeGreaterThan(0);
    expect(r.steady.lost).toBe(0);
  }, 400_000);
});
