import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { EVENTS_TOPIC, type ServiceEvent } from '../../core/events/types.ts';
import { ack } from '../../core/ports/event-bus.ts';
import { consents } from '../../plugins/consents/index.ts';
import { roles } from '../../plugins/roles/index.ts';
import { expectStatus } from '../helpers/expect-status.ts';
import { startIdentityService } from '../helpers/identity-service.ts';
import type { TestService } from '../helpers/service.ts';
import { until } from '../helpers/webhooks.ts';
import { roleEventsSuite, SUITE_REGION } from '../unit/roles/events.suite.ts';
import { newPerson, seed, startRolesService } from '../unit/roles/helpers.ts';
import { DATABASE_URL, deleteStreams, isolatedPostgres, NATS_URL, uniquePrefix } from './support.ts';

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

/** The identity service with roles and consents on a Postgres schema of its own, pg-queue or JetStream. */
async function onPostgres(streamPrefix?: string) {
  const pg = await isolatedPostgres('roles');
  const t = await startIdentityService({
    storage: pg.storage,
    plugins: [roles(), consents()],
    env: { REGION: SUITE_REGION, ...(streamPrefix ? { NATS_URL, NATS_STREAM_PREFIX: streamPrefix } : {}) },
  });
  cleanups.push(async () => {
    await pg.drop();
    if (streamPrefix) await deleteStreams(streamPrefix);
  });
  return t;
}

roleEventsSuite('role, permission and consent events on Postgres with pg-queue', () => onPostgres());
roleEventsSuite('role, permission and consent events on Postgres with JetStream', () =>
  onPostgres(uniquePrefix()),
);

describe('roles and consents under concurrency on Postgres', () => {
  let t: TestService;
  beforeAll(async () => {
    const pg = await isolatedPostgres('roles_race');
    t = await startRolesService({ storage: pg.storage });
    cleanups.unshift(async () => {
      await t.stop();
      await pg.drop();
    });
  });

  it('gives one 201 and 409s when many connections create one name at once', async () => {
    const racing = await Promise.all(
      Array.from({ length: 8 }, () => t.call('POST', '/permissions', { body: { name: 'race.one' } })),
    );
    expect(racing.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
  });

  it("serialises concurrent PUTs of a person's roles: each event's old list is what another left", async () => {
    const names = Array.from({ length: 6 }, (_, i) => `race-role-${i}`);
    for (const name of names)
      await expectStatus(await t.call('POST', '/roles', { body: { name, permissions: [] } }), 201);
    const id = await newPerson(t);
    const puts = await Promise.all(
      names.map((name) => t.call('PUT', `/persons/${id}/roles`, { body: { roles: [name] } })),
    );
    for (const res of puts) await expectStatus(res, 204);
    const events: Array<{ new_roles: string[]; old_roles: string[] }> = [];
    const sub = t.service.ctx.bus.consume<ServiceEvent>(EVENTS_TOPIC, async (m) => {
      const e = m.payload;
      if (e.event_metadata.event_name === 'RolesSetToPerson_v1' && e.person_id === id)
        events.push({ new_roles: e.new_roles as string[], old_roles: e.old_roles as string[] });
      return ack();
    });
    await until(() => events.length >= 6, 15_000, 'six RolesSetToPerson_v1 events');
    await sub.stop();
    expect(events).toHaveLength(6);
    // A chain: starting from [], each old list is the new list of exactly one other event.
    const starts = events.filter((e) => e.old_roles.length === 0);
    expect(starts).toHaveLength(1);
    for (const e of events.filter((x) => x.old_roles.length > 0))
      expect(events.filter((x) => Bun.deepEquals(x.new_roles, e.old_roles))).toHaveLength(1);
    const held = (await t.call('GET', `/persons/${id}/roles`)).json.result;
    expect(held).toHaveLength(1);
  });

  it('never answers 500 when a permission is deleted while roles naming it are made', async () => {
    await seed(t, ['race.doomed']);
    const results = await Promise.all([
      ...Array.from({ length: 6 }, (_, i) =>
        t.call('POST', '/roles', { body: { name: `doomed-${i}`, permissions: ['race.doomed'] } }),
      ),
      t.call('DELETE', '/permissions/race.doomed'),
    ]);
    for (const res of results) await expectStatus(res, [201, 204, 400]);
    for (let i = 0; i < 6; i++) {
      const role = await t.call('GET', `/roles/doomed-${i}`);
      if (role.status === 200) expect(role.json.result.permissions).toEqual([]);
    }
  });

  const lateWrites = [
    { lock: 'roles', path: 'roles', body: { roles: ['race-late-role'] }, event: 'RolesSetToPerson' },
    {
      lock: 'consents',
      path: 'consent/gdpr',
      body: { consent_levels: ['analytics'] },
      event: 'GdprConsents',
    },
  ];
  for (const w of lateWrites)
    it(`publishes nothing for a person deleted while its ${w.lock} PUT waited: the PUT answers 404`, async () => {
      if (w.lock === 'roles') await seed(t, ['race.late'], 'race-late-role');
      const id = await newPerson(t);
      const seen: string[] = [];
      const sub = t.service.ctx.bus.consume<ServiceEvent>(EVENTS_TOPIC, async (m) => {
        if (m.payload.person_id === id) seen.push(m.payload.event_metadata.event_name);
        return ack();
      });
      // Hold the person's roles lock, so that the deletion waits for it first and the PUT second.
      const admin = postgres(DATABASE_URL, { max: 2, onnotice: () => {} });
      const waiting = async () =>
        Number(
          (
            await admin`select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted`
          )[0]!.n,
        );
      let release!: () => void;
      const held = new Promise<void>((r) => {
        release = r;
      });
      let locked!: () => void;
      const lockTaken = new Promise<void>((r) => {
        locked = r;
      });
      const holder = admin.begin(async (tx) => {
        await tx`select pg_advisory_xact_lock(hashtextextended(${`${w.lock}:${id}`}, 0))`;
        locked();
        await held;
      });
      try {
        await lockTaken;
        const deletion = t.call('DELETE', `/persons/${id}`);
        await until(async () => (await waiting()) === 1, 15_000, 'the deletion waiting for the lock');
        const put = t.call('PUT', `/persons/${id}/${w.path}`, { body: w.body });
        await until(async () => (await waiting()) === 2, 15_000, 'the PUT waiting behind the deletion');
        release();
        await holder;
        await expectStatus(await deletion, 204);
        await expectStatus(await put, 404);
        await until(() => seen.includes('PersonDeleted_v1'), 15_000, 'PersonDeleted_v1');
        // Anything the PUT published was committed before it answered, behind the deletion's event.
        await Bun.sleep(500);
      } finally {
        release();
        await holder.catch(() => {});
        await sub.stop();
        await admin.end();
      }
      expect(seen.filter((name) => name.startsWith(w.event))).toEqual([]);
    });

  it("leaves none of a person's rows when it is deleted while they are written", async () => {
    await seed(t, ['race.p'], 'race-p-role');
    for (let round = 0; round < 10; round++) {
      const id = await newPerson(t);
      const results = await Promise.all([
        t.call('PUT', `/persons/${id}/roles`, { body: { roles: ['race-p-role'] } }),
        t.call('PUT', `/persons/${id}/additional-permissions`, { body: { permissions: ['race.p'] } }),
        t.call('PUT', `/persons/${id}/consent/gdpr`, { body: { consent_levels: ['analytics'] } }),
        t.call('DELETE', `/persons/${id}`),
      ]);
      for (const res of results) await expectStatus(res, [200, 204, 404]);
      const [row] = await t.service.ctx.storage.query<{ n: number }>(sql`select
        (select count(*) from roles_person_roles where person_id = ${id})
        + (select count(*) from roles_person_permissions where person_id = ${id})
        + (select count(*) from consents_gdpr where person_id = ${id}) as n`);
      expect(Number(row?.n)).toBe(0);
    }
  });
});
