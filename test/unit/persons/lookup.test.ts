import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { personDirectory } from '../../../core/capabilities/person-directory.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { createSettingsStore, GROUPS_CLAIM_CACHE_MS } from '../../../plugins/persons/settings.ts';
import { manualClock } from '../../helpers/clock.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { freshPglite } from '../../helpers/pglite.ts';
import type { TestService } from '../../helpers/service.ts';
import { email, startPersonsService } from './helpers.ts';

let t: TestService;
let storage: Storage;
beforeAll(async () => {
  storage = await freshPglite();
  t = await startPersonsService({ storage });
});
afterAll(() => t.stop());

/** Counts the statements run on the storage while `work` runs (the directory's reads go through it). */
async function statementsDuring(work: () => Promise<unknown>): Promise<number> {
  const session = storage.db._.session;
  const original = session.prepareQuery.bind(session);
  let n = 0;
  session.prepareQuery = ((...args: Parameters<typeof original>) => {
    n++;
    return original(...args);
  }) as typeof session.prepareQuery;
  try {
    await work();
  } finally {
    session.prepareQuery = original;
  }
  return n;
}

describe('the person directory lookup', () => {
  it('reads a person as GET /persons/{id} does, in one statement', async () => {
    const res = await t.call('POST', '/persons', {
      body: {
        handles: [
          email('look-1'),
          { type: 'username', value: 'zed' },
          { type: 'phone_number', value: '+14155550123' },
        ],
        groups: ['staff', 'admins'],
      },
    });
    await expectStatus(res, 201);
    const id: string = res.json.result.person_id;
    const read = await t.call('GET', `/persons/${id}`);
    await expectStatus(read, 200);
    const directory = t.service.ctx.capability(personDirectory)!;
    let got: Awaited<ReturnType<typeof directory.get>>;
    expect(await statementsDuring(async () => (got = await directory.get(t.org.id, id)))).toBe(1);
    const r = read.json.result;
    expect(got).toEqual({
      personId: r.person_id,
      orgId: t.org.id,
      personType: r.person_type,
      active: r.active,
      region: r.region,
      handles: r.handles,
      groups: ['admins', 'staff'],
      createdAt: r.created_at,
    });
    expect(await directory.get(t.org.id, id.toUpperCase())).toEqual(got);
    const byHandle = await directory.findByHandle(t.org.id, { type: 'username', value: 'ZED' });
    expect(byHandle).toEqual(got);
  });

  it('answers concurrent gets with one query, each caller its own person', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await t.call('POST', '/persons', {
        body: { handles: [email(`batch-${i}`)], groups: [`g${i}`] },
      });
      await expectStatus(res, 201);
      ids.push(res.json.result.person_id);
    }
    const other = await t.service.ctx.orgs.create('Other');
    const directory = t.service.ctx.capability(personDirectory)!;
    let found: Awaited<ReturnType<typeof directory.get>>[] = [];
    const statements = await statementsDuring(async () => {
      found = await Promise.all([
        ...ids.map((id) => directory.get(t.org.id, id)),
        directory.get(other.organization.id, ids[0]!),
        directory.get(t.org.id, crypto.randomUUID()),
        directory.get(t.org.id, 'not-a-uuid'),
      ]);
    });
    expect(statements).toBe(1);
    expect(found.slice(0, 20).map((p) => [p?.personId, p?.groups])).toEqual(
      ids.map((id, i) => [id, [`g${i}`]]),
    );
    expect(found.slice(20)).toEqual([undefined, undefined, undefined]);
  });

  it('lets lookups of requests that arrive in separate event-loop turns share a query on PGlite', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await t.call('POST', '/persons', { body: { handles: [email(`turn-${i}`)] } });
      await expectStatus(res, 201);
      ids.push(res.json.result.person_id);
    }
    const directory = t.service.ctx.capability(personDirectory)!;
    // Each lookup starts in a macrotask of its own, as requests read from the network do.
    const arriving = (id: string) =>
      new Promise<void>((resolve) => setTimeout(resolve, 0)).then(() => directory.get(t.org.id, id));
    let found: Awaited<ReturnType<typeof directory.get>>[] = [];
    const statements = await statementsDuring(async () => {
      found = await Promise.all(ids.map(arriving));
    });
    expect(found.map((p) => p?.personId)).toEqual(ids);
    expect(statements).toBeLessThanOrEqual(2);
  });
});

describe('groups_claim_name', () => {
  it('counts at once on the replica that set it, and on another within the cache bound', async () => {
    const clock = manualClock();
    const here = createSettingsStore(storage, clock);
    const there = createSettingsStore(storage, clock);
    const orgId = t.org.id;
    expect(await there.groupsClaimName(orgId)).toBe('groups');
    expect(await here.groupsClaimName(orgId)).toBe('groups');
    await here.setGroupsClaimName(orgId, 'roles');
    expect(await here.groupsClaimName(orgId)).toBe('roles');
    expect(await statementsDuring(() => there.groupsClaimName(orgId))).toBe(0);
    expect(await there.groupsClaimName(orgId)).toBe('groups');
    clock.advance(GROUPS_CLAIM_CACHE_MS);
    expect(await there.groupsClaimName(orgId)).toBe('roles');
  });
});
