/** Consistency, concurrency and sealing, part of the attribute buckets' behaviour suite (attributes.behaviour.ts). */
import { describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { expectStatus } from '../helpers/expect-status.ts';
import type { CallOptions, TestService } from '../helpers/service.ts';
import type { AttributesSuiteOptions } from './attributes.behaviour.ts';

const RW = '/organizations/attributes/end_user_read_write';

async function eventually(check: () => Promise<boolean>, ms = 5000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

export function attributesConcurrency(label: string, o: AttributesSuiteOptions, service: () => TestService) {
  const call = (method: string, path: string, opts?: CallOptions) => service().call(method, path, opts);
  const read = async (path = RW) => (await call('GET', path)).json.result;

  describe(`attribute buckets on ${label}: consistency headers`, () => {
    it('accepts both levels on every write; with one region all_regions waits for what local_region does', async () => {
      for (const level of ['local_region', 'all_regions']) {
        const headers = {
          'Service-Required-Consistency': level,
          'Service-Required-Consistency-Timeout': '5',
        };
        await expectStatus(await call('PUT', RW, { body: { level }, headers }), 204);
        // The write is visible on the next read: the commit happened before the answer.
        expect(await read()).toEqual({ level });
        await expectStatus(await call('PATCH', RW, { body: { more: 1 }, headers }), 204);
        await expectStatus(await call('DELETE', `${RW}?attributes=more`, { headers }), 204);
      }
    });

    it.each([
      ['Service-Required-Consistency', 'everywhere'],
      ['Service-Required-Consistency-Timeout', '0'],
      ['Service-Required-Consistency-Timeout', '121'],
      ['Service-Required-Consistency-Timeout', '1.5'],
    ])('answers 400 for %s: %s and writes nothing', async (header, value) => {
      await call('PUT', RW, { body: { before: 1 } });
      for (const [method, path, body] of [
        ['PUT', RW, { after: 1 }],
        ['PATCH', RW, { after: 1 }],
        ['PUT', '/organizations/attributes', { end_user_read_write: { after: 1 } }],
        ['DELETE', RW, undefined],
      ] as const) {
        const r = await call(method, path, { ...(body ? { body } : {}), headers: { [header]: value } });
        await expectStatus(r, 400);
        expect(r.json.errors[0].message).toContain(`header ${header} must be`);
      }
      expect(await read()).toEqual({ before: 1 });
    });

    it("answers 408 past the timeout while the bucket's row is locked elsewhere, and the write lands later", async () => {
      const t = service();
      await call('PUT', RW, { body: { v: 'before' } });
      // A fresh key check, cached for 5 s: the request below waits for the bucket's lock, not for auth.
      t.service.ctx.orgs.forget();
      await read();
      const { released } = await o.holdBucketLock(t, t.org.id, 'end_user_read_write', 2500);
      const started = Date.now();
      const r = await call('PUT', RW, {
        body: { v: 'after' },
        headers: { 'Service-Required-Consistency-Timeout': '1' },
      });
      const waited = Date.now() - started;
      await expectStatus(r, 408);
      expect(r.json.errors[0].message).toContain('within 1 s; it may still be applied');
      expect(waited).toBeGreaterThanOrEqual(990);
      expect(waited).toBeLessThan(2300);
      if (o.readsDuringLock) expect(await read()).toEqual({ v: 'before' });
      await released;
      expect(await eventually(async () => (await read()).v === 'after')).toBe(true);
      expect(await read()).toEqual({ v: 'after' });
    });

    it('answers 204 when the lock is released within the timeout', async () => {
      const t = service();
      await call('PUT', RW, { body: { v: 1 } });
      const { released } = await o.holdBucketLock(t, t.org.id, 'end_user_read_write', 500);
      const r = await call('PATCH', RW, {
        body: { w: 2 },
        headers: { 'Service-Required-Consistency-Timeout': '5' },
      });
      await expectStatus(r, 204);
      await released;
      expect(await read()).toEqual({ v: 1, w: 2 });
    });
  });

  describe(`attribute buckets on ${label}: concurrent writes`, () => {
    it('loses no update when many PATCHes to one bucket are in flight at once', async () => {
      await call('PUT', RW, { body: { base: true } });
      const n = 40;
      const answers = await Promise.all(
        Array.from({ length: n }, (_, i) => call('PATCH', RW, { body: { [`k${i}`]: i, shared: i } })),
      );
      for (const a of answers) await expectStatus(a, 204);
      const result = await read();
      for (let i = 0; i < n; i++) expect(result[`k${i}`]).toBe(i);
      expect(result.base).toBe(true);
      expect(Object.keys(result)).toHaveLength(n + 2);
      // Whichever PATCH came last set `shared`; it is one of the values sent.
      expect(result.shared).toBeGreaterThanOrEqual(0);
      expect(result.shared).toBeLessThan(n);
      await call('PUT', RW, { body: {} });
    });

    it('leaves exactly one of the sets sent when many PUTs to one bucket are in flight, never a mix', async () => {
      const n = 40;
      // Every set shares keys with the others and has keys of its own, and the sets differ in size.
      const setOf = (i: number) => ({
        ...Object.fromEntries(Array.from({ length: 5 }, (_, k) => [`shared${k}`, i])),
        ...Object.fromEntries(Array.from({ length: 1 + (i % 7) }, (_, k) => [`own${i}_${k}`, i])),
      });
      for (let round = 0; round < 3; round++) {
        const answers = await Promise.all(
          Array.from({ length: n }, (_, i) => call('PUT', RW, { body: setOf(i) })),
        );
        for (const a of answers) await expectStatus(a, 204);
        const result = await read();
        const winner = result.shared0;
        expect(typeof winner).toBe('number');
        expect(result).toEqual(setOf(winner));
      }
    });

    it('writes several buckets atomically: concurrent readers never see half of a multi-bucket PUT', async () => {
      const both = (i: number) => ({
        end_user_read_write: { marker: i, [`only${i}`]: true },
        end_user_no_access: { marker: i },
      });
      await call('PUT', '/organizations/attributes', { body: both(-1) });
      const reads: Array<Promise<{ json: { result: Record<string, { marker: number }> } }>> = [];
      const writes = Array.from({ length: 30 }, (_, i) => {
        reads.push(call('GET', '/organizations/attributes?buckets=end_user_read_write,end_user_no_access'));
        return call(i % 2 ? 'PUT' : 'PATCH', '/organizations/attributes', { body: both(i) });
      });
      for (const w of await Promise.all(writes)) await expectStatus(w, 204);
      for (const r of await Promise.all(reads)) {
        const { end_user_read_write: a, end_user_no_access: b } = r.json.result;
        expect(a!.marker).toBe(b!.marker);
      }
      const last = (
        await call('GET', '/organizations/attributes?buckets=end_user_read_write,end_user_no_access')
      ).json.result;
      expect(last.end_user_read_write.marker).toBe(last.end_user_no_access.marker);
      await call('PUT', '/organizations/attributes', {
        body: { end_user_read_write: {}, end_user_no_access: {} },
      });
    });

    it('never deadlocks two multi-bucket writes that name the same buckets in opposite orders', async () => {
      const forward = { end_user_read_only: { x: 1 }, 'person_pool-end_user_read_only': { x: 1 } };
      const backward = { 'person_pool-end_user_read_only': { x: 2 }, end_user_read_only: { x: 2 } };
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          call('PUT', '/organizations/attributes', {
            body: i % 2 ? forward : backward,
            headers: { 'Service-Required-Consistency-Timeout': '20' },
          }),
        ),
      );
      for (const a of answers) await expectStatus(a, 204);
    });

    it('keeps organizations apart when many write and read at once, the requests of a moment batched together', async () => {
      const orgs = await Promise.all(
        Array.from({ length: 8 }, (_, i) => service().service.ctx.orgs.create(`Burst ${i}`)),
      );
      const as = (i: number) => ({ orgId: orgs[i]!.organization.id, key: orgs[i]!.apiKey });
      const NA = '/organizations/attributes/end_user_no_access';
      for (let round = 0; round < 3; round++) {
        const writes = orgs.flatMap((_, i) => [
          call('PUT', RW, { ...as(i), body: { org: i, round, [`only${i}`]: true } }),
          call('PATCH', NA, { ...as(i), body: { [`r${round}`]: i } }),
        ]);
        for (const w of await Promise.all(writes)) await expectStatus(w, 204);
        const both = '/organizations/attributes?buckets=end_user_read_write,end_user_no_access';
        const [many, one] = await Promise.all([
          Promise.all(orgs.map((_, i) => call('GET', both, as(i)))),
          Promise.all(orgs.map((_, i) => call('GET', RW, as(i)))),
        ]);
        const patched = (i: number) =>
          Object.fromEntries(Array.from({ length: round + 1 }, (_, k) => [`r${k}`, i]));
        for (const [i, r] of many.entries()) {
          await expectStatus(r, 200);
          expect(r.json.result).toEqual({
            end_user_read_write: { org: i, round, [`only${i}`]: true },
            end_user_no_access: patched(i),
          });
        }
        for (const [i, r] of one.entries()) {
          await expectStatus(r, 200);
          expect(r.json.result).toEqual({ org: i, round, [`only${i}`]: true });
        }
      }
    });

    it('keeps writes of other organizations moving while a bucket is locked elsewhere', async () => {
      // One connection (PGlite): a transaction holding a lock holds the whole database; nothing to see.
      if (!o.readsDuringLock) return;
      const t = service();
      const orgs = await Promise.all(
        Array.from({ length: 6 }, (_, i) => t.service.ctx.orgs.create(`Moving ${i}`)),
      );
      const as = (i: number) => ({ orgId: orgs[i]!.organization.id, key: orgs[i]!.apiKey });
      await call('PUT', RW, { body: { v: 'before' } });
      const { released } = await o.holdBucketLock(t, t.org.id, 'end_user_read_write', 2000);
      const started = Date.now();
      // Writes to the locked bucket one after another, each taking a batch slot of its own as it comes:
      // more of them than there are slots. Then the others.
      const blocked: Array<ReturnType<typeof call>> = [];
      for (let i = 0; i < 6; i++) {
        blocked.push(call('PUT', RW, { body: { v: i } }));
        await new Promise((r) => setTimeout(r, 20));
      }
      const others = await Promise.all(
        orgs.flatMap((_, i) => [0, 1].map((k) => call('PUT', RW, { ...as(i), body: { v: k } }))),
      );
      for (const r of others) await expectStatus(r, 204);
      expect(Date.now() - started).toBeLessThan(1500);
      for (const r of await Promise.all(blocked)) await expectStatus(r, 204);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
      await released;
    });

    it('fails only the request at fault when requests of a moment are written together', async () => {
      const orgs = await Promise.all(
        Array.from({ length: 5 }, (_, i) => service().service.ctx.orgs.create(`Fault ${i}`)),
      );
      const as = (i: number) => ({ orgId: orgs[i]!.organization.id, key: orgs[i]!.apiKey });
      const MINE = '/organizations/attributes/mine';
      for (const i of orgs.keys())
        await expectStatus(
          await call('POST', '/organizations/attribute-buckets', { ...as(i), body: { name: 'mine' } }),
          201,
        );
      const full = Object.fromEntries(Array.from({ length: 50 }, (_, k) => [`k${k}`, k]));
      await expectStatus(await call('PUT', MINE, { ...as(0), body: full }), 204);
      const [tooMany, missing, ...rest] = await Promise.all([
        call('PATCH', MINE, { ...as(0), body: { one_more: 1 } }),
        call('PUT', '/organizations/attributes/nowhere_at_all', { ...as(1), body: { x: 1 } }),
        ...[2, 3, 4].flatMap((i) => [
          call('PUT', MINE, { ...as(i), body: { ok: i } }),
          call('PATCH', RW, { ...as(i), body: { ok: i } }),
        ]),
      ]);
      await expectStatus(tooMany!, 400);
      expect(tooMany!.json.errors[0].message).toContain('would hold 51 attributes');
      await expectStatus(missing!, 404);
      for (const r of rest) await expectStatus(r, 204);
      expect((await call('GET', MINE, as(0))).json.result).toEqual(full);
      for (const i of [2, 3, 4]) {
        expect((await call('GET', MINE, as(i))).json.result).toEqual({ ok: i });
        expect((await call('GET', RW, as(i))).json.result).toEqual({ ok: i });
      }
      const stray = await service().service.ctx.storage.query(
        sql`select 1 from attribute_buckets where name = 'nowhere_at_all'`,
      );
      expect(stray).toEqual([]);
    });

    it('keeps a custom bucket deleted while writes to it are in flight deleted, with its attributes', async () => {
      await call('POST', '/organizations/attribute-buckets', { body: { name: 'racing' } });
      const writes = Array.from({ length: 20 }, (_, i) =>
        call('PATCH', '/organizations/attributes/racing', { body: { [`k${i}`]: i } }),
      );
      const deleted = call('DELETE', '/organizations/attribute-buckets/racing');
      const statuses = (await Promise.all(writes)).map((w) => w.status);
      await expectStatus(await deleted, 204);
      for (const s of statuses) expect([204, 404]).toContain(s);
      const rows = await service().service.ctx.storage.query(
        sql`select 1 from attribute_buckets where org_id = ${service().org.id} and name = 'racing'`,
      );
      expect(rows).toEqual([]);
    });
  });

  describe(`attribute buckets on ${label}: values sealed at rest`, () => {
    it('stores no value in clear, and a sealed value copied to another key or organization does not open', async () => {
      const t = service();
      await call('PUT', RW, { body: { card: '4111-1111-1111-1111', other: 'x' } });
      const bucketRow = sql`org_id = ${t.org.id} and name = 'end_user_read_write'`;
      const [stored] = await t.service.ctx.storage.query<{ attributes: string }>(
        sql`select attributes::text as attributes from attribute_buckets where ${bucketRow}`,
      );
      const sealed: Record<string, string> = JSON.parse(stored!.attributes);
      expect(Object.keys(sealed).sort()).toEqual(['card', 'other']);
      for (const value of Object.values(sealed)) {
        expect(value).toStartWith('sb1.');
        expect(value).not.toContain('4111');
      }
      expect(stored!.attributes).not.toContain('4111');
      const card = sealed.card!;
      const setAtRest = (values: Record<string, string>) =>
        t.service.ctx.storage.query(
          sql`update attribute_buckets set attributes = ${JSON.stringify(values)}::jsonb where ${bucketRow}`,
        );
      // Move card's sealed value under the name `other`: bound to its name, it no longer opens.
      await setAtRest({ card, other: card });
      const r = await call('GET', `${RW}?attributes=other`);
      await expectStatus(r, 500);
      expect(r.json.errors[0].message).toBe(
        'attribute "other" of bucket end_user_read_write does not open: altered at rest, or sealed for another place',
      );
      expect((await call('GET', `${RW}?attributes=card`)).json.result).toEqual({
        card: '4111-1111-1111-1111',
      });
      // Read (and so kept opened in memory) a moment ago, then altered at rest: refused all the same.
      const flipped = card.at(-2) === 'A' ? 'B' : 'A';
      const altered = `${card.slice(0, -2)}${flipped}${card.at(-1)}`;
      await setAtRest({ card: altered, other: sealed.other! });
      await expectStatus(await call('GET', `${RW}?attributes=card`), 500);
      await expectStatus(await call('GET', RW), 500);
      // Nor under the same bucket and name of another organization.
      const other = await t.service.ctx.orgs.create('Thief');
      await t.service.ctx.storage.query(
        sql`insert into attribute_buckets (org_id, name, custom, version, created_at, updated_at, attributes)
          values (${other.organization.id}, 'end_user_read_write', false, 1, now(), now(), ${JSON.stringify({ card })}::jsonb)`,
      );
      const stolen = await call('GET', RW, { orgId: other.organization.id, key: other.apiKey });
      await expectStatus(stolen, 500);
      expect(stolen.text).not.toContain('4111');
      await call('PUT', RW, { body: {} });
    });
  });
}
