import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { migrate } from '../../core/db/migrate.ts';
import { attributes } from '../../plugins/attributes/index.ts';
import m0 from '../../plugins/attributes/migrations/0001_attributes_init.json' with { type: 'json' };
import { migrations } from '../../plugins/attributes/migrations/index.ts';
import { expectStatus } from '../helpers/expect-status.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const RW = '/organizations/attributes/end_user_read_write';

// A deployment that stored its attributes a row each (migration 0001) upgrades to a row a bucket
// (0002): every value moves with its seal, and reads back the same.
describe('attributes stored before 0002_attributes_in_bucket_row', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ definition: { plugins: [attributes()] } });
  });
  afterAll(async () => {
    await t.stop();
  });

  it('move into their bucket rows with their seals, and read back the same after the upgrade', async () => {
    const { storage, secrets } = t.service.ctx;
    const custom = await t.call('POST', '/organizations/attribute-buckets', { body: { name: 'legacy' } });
    await expectStatus(custom, 201);
    // Back to the schema of 0001: the attributes table, and bucket rows without their attributes.
    await storage.query(sql`delete from _migrations where set_name = 'attributes' and id <> ${m0.id}`);
    await storage.query(sql`alter table attribute_buckets drop column attributes`);
    for (const statement of m0.statements.filter((s) => s.startsWith('CREATE TABLE "attributes"')))
      await storage.query(sql.raw(statement));
    const org = t.org.id;
    const other = await t.service.ctx.orgs.create('Other');
    const rows: Array<[string, string, string, unknown]> = [
      [org, 'end_user_read_write', 'plan', 'pro'],
      [org, 'end_user_read_write', '__proto__', { nested: [1, 2] }],
      [org, 'legacy', 'since', 2019],
      [other.organization.id, 'end_user_read_write', 'plan', 'free'],
    ];
    for (const [o, bucket, key, value] of rows) {
      const sealed = await secrets.seal(JSON.stringify(value), `attributes:${o}:${bucket}:${key}`);
      await storage.query(sql`insert into attributes (org_id, bucket, key, value, updated_at)
        values (${o}, ${bucket}, ${key}, ${sealed}, now())`);
    }
    // The standard bucket of the first organization has its row, as every write made it; the other's
    // has none (the migration makes it).
    await storage.query(sql`insert into attribute_buckets (org_id, name, custom, version, created_at, updated_at)
      values (${org}, 'end_user_read_write', false, 3, now(), now())`);

    expect(await migrate(storage, [migrations])).toEqual({
      applied: ['attributes/0002_attributes_in_bucket_row'],
    });

    const mine = await t.call('GET', RW);
    await expectStatus(mine, 200);
    expect(mine.text).toBe('{"result":{"__proto__":{"nested":[1,2]},"plan":"pro"}}');
    expect((await t.call('GET', '/organizations/attributes/legacy')).json.result).toEqual({ since: 2019 });
    const theirs = await t.call('GET', RW, { orgId: other.organization.id, key: other.apiKey });
    expect(theirs.json.result).toEqual({ plan: 'free' });
    const tables = await storage.query(sql`select 1 from pg_tables where tablename = 'attributes'`);
    expect(tables).toEqual([]);
    // Written after the upgrade, and read back.
    await expectStatus(await t.call('PATCH', RW, { body: { seats: 5 } }), 204);
    expect((await t.call('GET', RW)).text).toBe(
      '{"result":{"__proto__":{"nested":[1,2]},"plan":"pro","seats":5}}',
    );
  });
});
