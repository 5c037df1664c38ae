import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { nextAfterFailure } from '../../../core/delivery/retry-schedule.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type HttpsReceiver, startHttpsReceiver } from '../../helpers/tls.ts';
import { until, type WebhookTestService } from '../../helpers/webhooks.ts';

const MIN = 60_000;
/** How much faster than real time the services of this suite run. */
export const RATE = 300;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A test-events answer item without the members it lists at the top: the event as delivered. */
const withoutListing = ({
  event_id: _id,
  event_name: _name,
  timestamp: _at,
  organization_id: _org,
  ...event
}: Record<string, unknown>) => event;

/**
 * Delivery end to end, with real HTTPS receivers on loopback: the same body runs on every bus adapter.
 * `make` starts a service on a clock RATE times faster than real time (30 minutes pass in 6 s).
 */
export function deliverySuite(name: string, make: () => Promise<WebhookTestService>) {
  describe(`webhook delivery: ${name}`, () => {
    let t: WebhookTestService;
    const receivers: HttpsReceiver[] = [];
    let n = 0;

    beforeAll(async () => {
      t = await make();
    });
    afterAll(async () => {
      await Promise.all(receivers.map((r) => r.stop()));
      await t.stop();
    });

    const receiver = (handler: Parameters<typeof startHttpsReceiver>[0] = () => new Response('ok')) => {
      const r = startHttpsReceiver(handler);
      receivers.push(r);
      return r;
    };
    /** A webhook on the receiver with one event trigger; returns its id and URL. */
    async function hook(rx: HttpsReceiver, trigger = 'RoleCreated_v1', extra: Record<string, unknown> = {}) {
      const target = rx.url(`/hook-${++n}`, 'a.hooks.test');
      const r = await t.call('POST', '/organizations/webhooks', {
        body: { name: `hook ${n}`, target_url: target, ...extra },
      });
      await expectStatus(r, 201);
      const id: string = r.json.result.id;
      const tr = await t.call('POST', `/organizations/webhooks/${id}/triggers`, {
        body: { trigger_type: 'event', trigger_name: trigger },
      });
      await expectStatus(tr, 201);
      return { id, target };
    }
    async function publish(eventName = 'RoleCreated_v1', extra: Record<string, unknown> = {}) {
      const r = await t.call('POST', '/test-events', { body: [{ event_name: eventName, ...extra }] });
      await expectStatus(r, 201);
      return r.json.result as Array<
        { event_metadata: { event_id: string; event_name: string } } & Record<string, unknown>
      >;
    }
    const hits = (rx: HttpsReceiver, target: string) => rx.requests.filter((q) => target.endsWith(q.path));
    const deliveriesOf = async (id: string, query = '') =>
      (await t.call('GET', `/organizations/webhooks/${id}/deliveries${query}`)).json;

    it('POSTs a signed JWT with the spec claims and the custom headers; jose and the receiver helper verify it', async () => {
      const rx = receiver();
      const { id, target } = await hook(rx, 'RoleCreated_v1', {
        custom_headers: { 'X-Secret': ['s3cr3t'], 'X-Multi': ['a', 'b'] },
      });
      const [event] = await publish();
      await until(() => hits(rx, target).length === 1, 10_000, 'the delivery');
      const req = hits(rx, target)[0]!;
      expect(req.method).toBe('POST');
      expect(req.headers.get('content-type')).toBe('application/jwt');
      expect(req.headers.get('x-secret')).toBe('s3cr3t');
      expect(req.headers.get('x-multi')).toBe('a, b');

      const jwks = await (
        await fetch(`${t.baseUrl}/organizations/webhooks/verification-jwks`, {
          headers: { 'Service-OrgID': t.org.id },
        })
      ).json();
      const header = decodeProtectedHeader(req.body);
      expect(header.alg).toBe('ES256');
      expect(jwks.keys.map((k: { kid: string }) => k.kid)).toContain(header.kid);
      const { payload } = await jwtVerify(req.body, createLocalJWKSet(jwks), { algorithms: ['ES256'] });
      expect(payload).toEqual({
        jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
        aud: t.org.id,
        sub: event!.event_metadata.event_id,
        iss: t.baseUrl,
        iat: expect.any(Number),
        exp: (payload.iat as number) + 300,
        webhook_id: id,
        target_url: target,
        trigger_type: 'event',
        trigger_name: 'RoleCreated_v1',
        // The event as published: the answer's top-level event_id, event_name, timestamp and
        // organization_id repeat its metadata and are not part of it.
        trigger_content: withoutListing(event!),
      });
      const claims = await t.verify(
        { body: req.body, url: target },
        { webhookId: id, triggerName: 'RoleCreated_v1' },
      );
      expect(claims.sub).toBe(event!.event_metadata.event_id);
    });

    it('calls several webhooks on one trigger in parallel', async () => {
      const spans: Array<{ start: number; end: number }> = [];
      const rx = receiver(async () => {
        const start = performance.now();
        await sleep(400);
        spans.push({ start, end: performance.now() });
        return new Response('ok');
      });
      const hooks = [];
      for (let i = 0; i < 5; i++) hooks.push(await hook(rx, 'RoleUpdated_v1'));
      const t0 = performance.now();
      await publish('RoleUpdated_v1');
      await until(() => spans.length === 5, 10_000, 'five deliveries');
      const elapsed = performance.now() - t0;
      // Every call began before the first one ended: they overlapped, rather than ran one after another.
      expect(Math.max(...spans.map((s) => s.start))).toBeLessThan(Math.min(...spans.map((s) => s.end)));
      expect(elapsed).toBeLessThan(5 * 400);
      for (const h of hooks) expect(hits(rx, h.target)).toHaveLength(1);
    });

    it('retries a receiver that answered 500, with a fresh jti, and succeeds on its 200', async () => {
      let calls = 0;
      const rx = receiver(
        () => new Response(++calls === 1 ? 'down\u0000' : 'ok', { status: calls === 1 ? 500 : 200 }),
      );
      const { id, target } = await hook(rx, 'RoleDeleted_v1');
      const [event] = await publish('RoleDeleted_v1');
      await until(
        async () => (await deliveriesOf(id)).result?.[0]?.status === 'succeeded',
        10_000,
        'success on retry',
      );
      const got = hits(rx, target);
      expect(got).toHaveLength(2);
      const claims = await Promise.all(got.map((q) => t.verify({ body: q.body, url: target })));
      expect(claims[0]!.sub).toBe(event!.event_metadata.event_id);
      expect(claims[1]!.sub).toBe(claims[0]!.sub);
      expect(claims[1]!.jti).not.toBe(claims[0]!.jti);
      const [d] = (await deliveriesOf(id)).result;
      expect(d.attempt_count).toBe(2);
      expect(
        d.attempts.map((a: { status_code: number; outcome: string }) => [a.status_code, a.outcome]),
      ).toEqual([
        [500, 'retry'],
        [200, 'succeeded'],
      ]);
      // A NUL, which Postgres text cannot hold, is recorded as U+FFFD.
      expect(d.attempts[0].response).toBe('down\uFFFD');
      expect(d.attempts[0].error_kind).toBe('http_status');
      expect(Date.parse(d.attempts[0].retry_at) - Date.parse(d.attempts[0].started_at)).toBe(MIN);
      expect(Date.parse(d.attempts[1].started_at)).toBeGreaterThanOrEqual(
        Date.parse(d.attempts[0].retry_at) - 5,
      );
    });

    it('drops a delivery that always fails at the end of the 30-minute window, after 1, 2, 4, 8, 10 minutes', async () => {
      const rx = receiver(() => new Response('nope', { status: 503 }));
      const { id, target } = await hook(rx, 'PermissionCreated_v1');
      await publish('PermissionCreated_v1');
      await until(async () => (await deliveriesOf(id)).result?.[0]?.status === 'dropped', 60_000, 'the drop');
      const [d] = (await deliveriesOf(id)).result;
      expect(d.attempt_count).toBe(6);
      expect(hits(rx, target)).toHaveLength(6);
      expect(d.last_error).toContain('retry window of 30 minutes ended');
      // The schedule the service set: retries due 1, 3, 7, 15 and 25 minutes after the first attempt
      // (1, 2, 4, 8 and 10 minutes apart), or a minute after an attempt that ran late, whichever is later.
      const starts: number[] = d.attempts.map(
        (a: { started_at: string }) => Date.parse(a.started_at) - Date.parse(d.attempts[0].started_at),
      );
      const due: number[] = d.attempts
        .slice(0, 5)
        .map((a: { retry_at: string }) => Date.parse(a.retry_at) - Date.parse(d.attempts[0].started_at));
      const schedule = [1, 3, 7, 15, 25].map((m) => m * MIN);
      expect(due).toEqual(schedule.map((at, i) => Math.max(at, starts[i]! + MIN)));
      // When the attempts began: never early, and late by no more than the bus's wake-up latency (at
      // most its 500 ms poll: 2.5 minutes on this clock).
      starts.slice(1).forEach((s, i) => {
        expect(s).toBeGreaterThanOrEqual(due[i]! - 5);
        expect(s - due[i]!).toBeLessThan(RATE * 600);
      });
      expect(d.attempts.map((a: { outcome: string }) => a.outcome)).toEqual([
        ...Array(5).fill('retry'),
        'dropped',
      ]);
      await sleep(1000); // 5 more minutes of clock: nothing more comes
      expect(hits(rx, target)).toHaveLength(6);
    }, 120_000);

    it('counts a 3xx as a failure and does not follow it', async () => {
      const rx = receiver((req) =>
        new URL(req.url).pathname === '/moved'
          ? new Response('moved here')
          : new Response(null, { status: 302, headers: { location: '/moved' } }),
      );
      const { id, target } = await hook(rx, 'PermissionDeleted_v1');
      await publish('PermissionDeleted_v1');
      await until(
        async () => ((await deliveriesOf(id)).result?.[0]?.attempt_count ?? 0) >= 2,
        10_000,
        'a retry',
      );
      const [d] = (await deliveriesOf(id)).result;
      expect(d.status).not.toBe('succeeded');
      expect(d.attempts[0]).toMatchObject({ status_code: 302, ok: false, outcome: 'retry' });
      expect(d.attempts[0].error).toContain('redirects are not followed');
      expect(rx.requests.filter((q) => q.path === '/moved')).toHaveLength(0);
      expect(hits(rx, target).length).toBeGreaterThanOrEqual(2);
    });

    it('makes no further attempt once the webhook is deleted, and records the drop', async () => {
      const rx = receiver(() => new Response('nope', { status: 500 }));
      const { id, target } = await hook(rx, 'PermissionUpdated_v1');
      await publish('PermissionUpdated_v1');
      await until(() => hits(rx, target).length >= 1, 10_000, 'the first attempt');
      const [delivery] = await t.service.ctx.storage.query<{ id: string }>(
        sql`select id from webhook_deliveries where webhook_id = ${id}`,
      );
      await expectStatus(await t.call('DELETE', `/organizations/webhooks/${id}`), 204);
      const seen = hits(rx, target).length;
      await until(
        async () =>
          (
            await t.service.ctx.storage.query<{ status: string }>(
              sql`select status from webhook_deliveries where id = ${delivery!.id}`,
            )
          )[0]?.status === 'dropped',
        10_000,
        'the drop',
      );
      await sleep(1000); // 5 more minutes of clock: time for two more retries, had the webhook lived
      // One attempt may have been under way when the delete committed; none starts after.
      expect(hits(rx, target).length).toBeLessThanOrEqual(seen + 1);
      const [row] = await t.service.ctx.storage.query<{ last_error: string; settled_at: string | null }>(
        sql`select last_error, settled_at from webhook_deliveries where id = ${delivery!.id}`,
      );
      expect(row!.last_error).toBe('the webhook was deleted');
      expect(row!.settled_at).not.toBeNull();
    });

    it('reads the webhook again for a retry: a target changed after the first attempt gets it', async () => {
      const before = receiver(() => new Response('nope', { status: 500 }));
      const after = receiver();
      const { id, target } = await hook(before, 'PermissionsSetToPerson_v1');
      const [event] = await publish('PermissionsSetToPerson_v1');
      await until(() => hits(before, target).length >= 1, 10_000, 'the first attempt');
      const moved = after.url(`/hook-moved-${n}`, 'b.hooks.test');
      const patched = await t.call('PATCH', `/organizations/webhooks/${id}`, { body: { target_url: moved } });
      await expectStatus(patched, 200);
      await until(
        async () => (await deliveriesOf(id)).result?.[0]?.status === 'succeeded',
        10_000,
        'success at the new target',
      );
      expect(hits(before, target)).toHaveLength(1);
      const got = hits(after, moved);
      expect(got).toHaveLength(1);
      const claims = await t.verify({ body: got[0]!.body, url: moved });
      expect(claims.sub).toBe(event!.event_metadata.event_id);
      expect(claims.target_url).toBe(moved);
      expect((await deliveriesOf(id)).result[0].attempt_count).toBe(2);
    });

    it('delivers a duplicated test event twice with the same sub', async () => {
      const rx = receiver();
      const { target } = await hook(rx, 'RolesSetToPerson_v1');
      const events = await publish('RolesSetToPerson_v1', { duplicates: true });
      await until(() => hits(rx, target).length === 2, 10_000, 'both copies');
      const subs = await Promise.all(
        hits(rx, target).map(async (q) => (await t.verify({ body: q.body, url: target })).sub),
      );
      expect(subs).toEqual([events[0]!.event_metadata.event_id, events[0]!.event_metadata.event_id]);
    });

    it('matches MitmAttackDetectedV1 triggers with MitmAttackDetected_v1 events, and nothing else', async () => {
      const rx = receiver();
      const mitm = await hook(rx, 'MitmAttackDetectedV1');
      await publish('RoleCreated_v1');
      const [event] = await publish('MitmAttackDetected_v1');
      await until(() => hits(rx, mitm.target).length === 1, 10_000, 'the MITM delivery');
      const claims = await t.verify({ body: hits(rx, mitm.target)[0]!.body, url: mitm.target });
      // trigger_name is the name accepted for the trigger: the spelling of the spec's trigger list.
      expect(claims.trigger_name).toBe('MitmAttackDetectedV1');
      expect(claims.sub).toBe(event!.event_metadata.event_id);
      await sleep(200);
      expect(hits(rx, mitm.target)).toHaveLength(1);
    });

    it('lists deliveries with their attempts, filtered and paginated; resends one; recovers dropped ones', async () => {
      let failing = true;
      const rx = receiver(() => new Response(null, { status: failing ? 500 : 204 }));
      const { id, target } = await hook(rx, 'GdprConsentsChanged_v1');
      const events = (
        await t.call('POST', '/test-events', { body: [{ event_name: 'GdprConsentsChanged_v1', count: 3 }] })
      ).json.result;
      await until(
        async () => (await deliveriesOf(id, '?status=retrying')).result?.length === 3,
        10_000,
        'three retrying',
      );
      const busy = (await deliveriesOf(id)).result[0];
      const conflict = await t.call('POST', `/organizations/webhooks/${id}/deliveries/${busy.id}/resend`);
      await expectStatus(conflict, 409);
      await until(
        async () => (await deliveriesOf(id, '?status=dropped')).result?.length === 3,
        60_000,
        'three drops',
      );

      const page1 = await deliveriesOf(id, '?limit=2');
      expect(page1.result).toHaveLength(2);
      expect(page1.meta.cursor_pagination).toMatchObject({ limit: 2, total_count: 3 });
      const page2 = await deliveriesOf(id, `?limit=2&cursor=${page1.meta.cursor_pagination.cursor}`);
      expect(page2.result).toHaveLength(1);
      expect(page2.meta.cursor_pagination.cursor).toBe('');
      const all = [...page1.result, ...page2.result];
      expect(new Set(all.map((d: { event_id: string }) => d.event_id))).toEqual(
        new Set(events.map((e: { event_metadata: { event_id: string } }) => e.event_metadata.event_id)),
      );
      // Six attempts on an idle machine (1, 3, 7, 15, 25 minutes after the first); on a loaded one an
      // attempt can run minutes late on this fast clock, so fewer fit in the window. Either way each
      // failure but the last was retried, and the retry after the last would fall past the window.
      const tried: Array<{ started_at: string; outcome: string }> = [...all[0].attempts].sort(
        (a: { attempt: number }, b: { attempt: number }) => a.attempt - b.attempt,
      );
      expect(tried.length).toBeGreaterThanOrEqual(2);
      expect(tried.length).toBeLessThanOrEqual(6);
      expect(tried.map((a) => a.outcome)).toEqual([...Array(tried.length - 1).fill('retry'), 'dropped']);
      const at = (a: { started_at: string }) => Date.parse(a.started_at);
      expect(nextAfterFailure(tried.length, at(tried.at(-1)!), at(tried[0]!))).toEqual({ drop: true });
      expect((await deliveriesOf(id, '?status=succeeded')).result).toHaveLength(0);
      await expectStatus(await t.call('GET', `/organizations/webhooks/${id}/deliveries?status=lost`), 400);
      const misspelt = await t.call('GET', `/organizations/webhooks/${id}/deliveries?stauts=dropped`);
      await expectStatus(misspelt, 400);
      expect(misspelt.json.errors[0].message).toContain('query.stauts: is not a parameter of this operation');
      await expectStatus(await t.call('GET', `/organizations/webhooks/${id}/deliveries?cursor=zzz`), 400);

      failing = false;
      const before = hits(rx, target).length;
      const resent = await t.call('POST', `/organizations/webhooks/${id}/deliveries/${all[0].id}/resend`);
      await expectStatus(resent, 202);
      expect(resent.json.result).toMatchObject({
        resend_of: all[0].id,
        status: 'pending',
        event_id: all[0].event_id,
      });
      await until(() => hits(rx, target).length === before + 1, 10_000, 'the resend');

      const since = new Date(Date.now() - 3600_000).toISOString();
      // Recovers running at once resend each dropped delivery once between them.
      const recovers = await Promise.all(
        Array.from({ length: 5 }, () =>
          t.call('POST', `/organizations/webhooks/${id}/recover`, { body: { since } }),
        ),
      );
      expect(recovers).toHaveLength(5);
      for (const r of recovers) await expectStatus(r, 202);
      expect(recovers.reduce((n, r) => n + r.json.result.recovered, 0)).toBe(2);
      await until(() => hits(rx, target).length === before + 3, 10_000, 'the recovered deliveries');
      const again = await t.call('POST', `/organizations/webhooks/${id}/recover`, { body: { since } });
      expect(again.json.result.recovered).toBe(0);
      expect(
        (await t.call('POST', `/organizations/webhooks/${id}/recover`, { body: { since: 'yesterday' } }))
          .status,
      ).toBe(400);
      await until(
        async () => (await deliveriesOf(id, '?status=succeeded')).result?.length === 3,
        10_000,
        'three successes',
      );
    }, 120_000);

    it('calls no webhook whose trigger does not match or was removed', async () => {
      const rx = receiver();
      const { id, target } = await hook(rx, 'PasswordChanged_v1');
      await t.call(
        'DELETE',
        `/organizations/webhooks/${id}/triggers?trigger_type=event&trigger_name=PasswordChanged_v1`,
      );
      await publish('PasswordChanged_v1');
      await publish('PersonDeleted_v1');
      await sleep(300);
      expect(hits(rx, target)).toHaveLength(0);
    });
  });
}
