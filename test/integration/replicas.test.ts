import { describe, expect, it } from 'bun:test';
import { type ReplicaDrillResult, replicaDrill, verdictLine } from '../../scripts/drill/replicas.ts';
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
