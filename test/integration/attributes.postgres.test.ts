import { afterAll, describe, expect, it } from 'bun:test';
import postgres from 'postgres';
import { attributes } from '../../plugins/attributes/index.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { attributesSuite, SUITE_OPTIONS } from '../unit/attributes.behaviour.ts';
import { DATABASE_URL, isolatedPostgres } from './support.ts';

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

/** A service on a Postgres schema of its own, which the service migrates on start. */
async function startOnPostgres(options = SUITE_OPTIONS): Promise<TestService & { schema: string }> {
  const pg = await isolatedPostgres('attrs');
  cleanups.push(pg.drop);
  const t = await startTestService({ storage: pg.storage, definition: { plugins: [attributes(options)] } });
  return Object.assign(t, { schema: pg.schema });
}

const schemaOf = new WeakMap<TestService, string>();

attributesSuite('Postgres', {
  async start() {
    const t = await startOnPostgres();
    schemaOf.set(t, t.schema);
    return t;
  },
  // Another connection, as another replica would hold it: BEGIN, SELECT ... FOR UPDATE, wait, COMMIT.
  async holdBucketLock(t, orgId, bucket, ms) {
    const sql = postgres(DATABASE_URL, {
      max: 1,
      onnotice: () => {},
      connection: { search_path: schemaOf.get(t)! },
    });
    let held: (rows: number) => void = () => {};
    const locked = new Promise<number>((r) => {
      held = r;
    });
    const released = sql
      .begin(async (tx) => {
        const rows =
          await tx`select 1 from attribute_buckets where org_id = ${orgId} and name = ${bucket} for update`;
        held(rows.length);
        await new Promise((r) => setTimeout(r, ms));
      })
      .finally(() => sql.end());
    expect(await locked).toBe(1);
    return { released: released.then(() => {}) };
  },
  readsDuringLock: true,
});

describe('attribute buckets on Postgres: several replicas', () => {
  it('shows a write acknowledged by one replica on the next read from another', async () => {
    const pg = await isolatedPostgres('attrs');
    cleanups.push(pg.drop);
    const a = await startTestService({ storage: pg.storage, definition: { plugins: [attributes()] } });
    const b = await startTestService({
      storage: await pg.another(),
      definition: { plugins: [attributes()] },
    });
    try {
      const as = { orgId: a.org.id, key: a.apiKey };
      for (let i = 0; i < 20; i++) {
        expect(
          (await a.call('PUT', '/organizations/attributes/end_user_read_write', { ...as, body: { i } }))
            .status,
        ).toBe(204);
        expect((await b.call('GET', '/organizations/attributes/end_user_read_write', as)).json).toEqual({
          result: { i },
        });
      }
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});
