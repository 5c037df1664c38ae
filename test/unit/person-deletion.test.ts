import { afterEach, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { ServiceError } from '../../core/errors.ts';
import { beforePersonDeleted } from '../../core/persons/before-person-deleted.ts';
import { definePlugin } from '../../core/plugin.ts';
import { expectStatus } from '../helpers/expect-status.ts';
import {
  type RecordingIdentityService as IdentityService,
  startRecordingIdentityService as startIdentityService,
} from '../helpers/identity-recorder.ts';

const GOOD = 'correct horse battery staple';
const ADA = { type: 'username', value: 'ada' };

/** A plugin whose beforePersonDeleted handler fails, listed after those that delete rows. */
const failingCleanUp = definePlugin({
  id: 'failing-clean-up',
  setup: () => ({
    attach: [
      beforePersonDeleted.attach({
        run: () => {
          throw new ServiceError(503, 'CLEAN_UP_FAILED', 'the archive is unavailable; try again');
        },
      }),
    ],
  }),
});

let svc: IdentityService | undefined;
afterEach(async () => {
  await svc?.stop();
  svc = undefined;
});

/** Rows naming the person, per table that has a person_id column (every plugin's tables). */
async function rowsOf(s: IdentityService, personId: string): Promise<Record<string, number>> {
  const tables = await s.service.ctx.storage.query<{ table_name: string }>(
    sql`select table_name from information_schema.columns
        where column_name = 'person_id' and table_schema = current_schema() order by table_name`,
  );
  const counts: Record<string, number> = {};
  for (const { table_name } of tables) {
    const [row] = await s.service.ctx.storage.query<{ n: number }>(
      sql`select count(*)::int as n from ${sql.identifier(table_name)} where person_id = ${personId}`,
    );
    counts[table_name] = row?.n ?? 0;
  }
  return counts;
}

/** A person with a handle, a group, a password and a token: a row in every table that keeps one. */
async function fullPerson(s: IdentityService): Promise<string> {
  const made = await s.call('POST', '/persons', { body: { handles: [ADA], groups: ['staff'] } });
  await expectStatus(made, 201);
  const personId: string = made.json.result.person_id;
  await expectStatus(
    await s.call('PUT', `/persons/${personId}/credentials/password`, { body: { password: GOOD } }),
    204,
  );
  await expectStatus(
    await s.call('POST', '/authenticate/password', { key: null, body: { handle: ADA, password: GOOD } }),
    200,
  );
  return personId;
}

describe('DELETE /persons/{person_id}', () => {
  it("leaves no row of the person in any plugin's table", async () => {
    svc = await startIdentityService();
    const personId = await fullPerson(svc);
    const before = await rowsOf(svc, personId);
    for (const table of [
      'persons',
      'persons_handles',
      'persons_group_memberships',
      'password_credentials',
      'tokens_issued_persons',
    ])
      expect(before[table] ?? 0).toBeGreaterThan(0);

    await expectStatus(await svc.call('DELETE', `/persons/${personId}`), 204);
    const after = await rowsOf(svc, personId);
    expect(Object.entries(after).filter(([, n]) => n > 0)).toEqual([]);
    await svc.eventFor('PersonDeleted_v1', personId);
  });

  it('rolls the whole deletion back when a clean-up handler fails', async () => {
    svc = await startIdentityService({ extra: [failingCleanUp] });
    const personId = await fullPerson(svc);
    const before = await rowsOf(svc, personId);

    const refused = await svc.call('DELETE', `/persons/${personId}`);
    await expectStatus(refused, 503);
    expect(refused.json.errors[0].message).toBe('the archive is unavailable; try again');
    expect(await rowsOf(svc, personId)).toEqual(before);
    await expectStatus(await svc.call('GET', `/persons/${personId}`), 200);
    await expectStatus(
      await svc.call('POST', '/authenticate/password', { key: null, body: { handle: ADA, password: GOOD } }),
      200,
    );
    await new Promise((r) => setTimeout(r, 200));
    expect(svc.events.some((e) => e.event_metadata.event_name === 'PersonDeleted_v1')).toBe(false);
  });
});
