import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { createWebhookVerifier, type WebhookVerifier } from 'identity-service/receiver';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { IdentityTestService } from '../../helpers/identity-service.ts';
import { type HttpsReceiver, startHttpsReceiver } from '../../helpers/tls.ts';
import { until } from '../../helpers/webhooks.ts';

const TWINNED = [
  'PermissionCreated',
  'PermissionUpdated',
  'PermissionDeleted',
  'RoleCreated',
  'RoleUpdated',
  'RoleDeleted',
  'RolesSetToPerson',
  'PermissionsSetToPerson',
];
/** Every event the roles and consents plugins emit. */
export const ROLE_AND_CONSENT_EVENTS = [
  ...TWINNED.flatMap((type) => [`${type}_v1`, `${type}_InRegion_v1`]),
  'GdprConsentsChanged_v1',
];
/** The deployment region the suite's service must be started with (REGION). */
export const SUITE_REGION = 'europe-belgium';

type Delivered = { name: string; members: Record<string, unknown>; metadata: Record<string, unknown> };

/**
 * Each role, permission and consent event, produced by the real API call, delivered to a real HTTPS
 * event webhook, verified with the receiver helper, with exactly the spec's members.
 */
export function roleEventsSuite(label: string, start: () => Promise<IdentityTestService>) {
  describe(label, () => {
    let t: IdentityTestService;
    let rx: HttpsReceiver;
    let target: string;
    let receiver: WebhookVerifier;
    const delivered: Delivered[] = [];

    beforeAll(async () => {
      t = await start();
      receiver = createWebhookVerifier({ baseUrl: t.baseUrl, orgId: t.org.id });
      rx = startHttpsReceiver(() => new Response(null, { status: 204 }));
      target = rx.url('/events', 'c.hooks.test');
      const made = await t.http('POST', '/organizations/webhooks', {
        body: { name: 'roles', target_url: target },
      });
      await expectStatus(made, 201);
      for (const trigger_name of ROLE_AND_CONSENT_EVENTS)
        await expectStatus(
          await t.http('POST', `/organizations/webhooks/${made.json.result.id}/triggers`, {
            body: { trigger_type: 'event', trigger_name },
          }),
          201,
        );
    });
    afterAll(async () => {
      await rx.stop();
      await t.stop();
    });

    async function drain() {
      for (const q of rx.requests.splice(0)) {
        const { claims, event } = await receiver.verify({ body: q.body, url: target });
        const { event_metadata, ...members } = event;
        delivered.push({
          name: claims.trigger_name,
          members,
          metadata: event_metadata as Record<string, unknown>,
        });
      }
    }

    /** The members of the event of that name matching `has`, and of its twin when it has one; waits for them. */
    async function received(name: string, has: Record<string, unknown>): Promise<Record<string, unknown>[]> {
      const names = name === 'GdprConsentsChanged_v1' ? [name] : [name, name.replace('_v1', '_InRegion_v1')];
      const pick = (n: string) =>
        delivered.filter(
          (d) => d.name === n && Object.entries(has).every(([k, v]) => Bun.deepEquals(d.members[k], v)),
        );
      await until(
        async () => {
          await drain();
          return names.every((n) => pick(n).length > 0);
        },
        15_000,
        `${names.join(' and ')} with ${JSON.stringify(has)}`,
      );
      return names.map((n) => {
        const [one, ...more] = pick(n);
        expect(more).toEqual([]);
        expect(one!.metadata).toMatchObject({
          event_name: n,
          event_type: n.replace('_v1', ''),
          event_version: 1,
          source: 1,
          organization_id: t.org.id,
          is_test_event: false,
        });
        return one!.members;
      });
    }

    const call = (method: string, path: string, body?: unknown) =>
      t.http(method, path, body === undefined ? {} : { body });

    it('delivers the permission events', async () => {
      await expectStatus(await call('POST', '/permissions', { name: 'ev.read', description: 'Reads' }), 201);
      expect(await received('PermissionCreated_v1', { permission_name: 'ev.read' })).toEqual([
        { permission_name: 'ev.read', description: 'Reads' },
        { permission_name: 'ev.read', description: 'Reads', region: SUITE_REGION },
      ]);
      await expectStatus(await call('PATCH', '/permissions/ev.read', { description: 'Reads all' }), 200);
      expect(await received('PermissionUpdated_v1', { permission_name: 'ev.read' })).toEqual([
        { permission_name: 'ev.read', description: 'Reads all' },
        { permission_name: 'ev.read', description: 'Reads all', region: SUITE_REGION },
      ]);
      await expectStatus(await call('POST', '/permissions', { name: 'ev.gone' }), 201);
      await expectStatus(await call('DELETE', '/permissions/ev.gone'), 204);
      expect(await received('PermissionDeleted_v1', { permission_name: 'ev.gone' })).toEqual([
        { permission_name: 'ev.gone' },
        { permission_name: 'ev.gone', region: SUITE_REGION },
      ]);
    });

    it('delivers the role events', async () => {
      await expectStatus(await call('POST', '/permissions', { name: 'ev.write' }), 201);
      await expectStatus(
        await call('POST', '/roles', {
          name: 'ev-editor',
          description: 'Edits',
          permissions: ['ev.write', 'ev.read'],
        }),
        201,
      );
      expect(await received('RoleCreated_v1', { role_name: 'ev-editor' })).toEqual([
        { role_name: 'ev-editor', description: 'Edits', permissions: ['ev.read', 'ev.write'] },
        {
          role_name: 'ev-editor',
          description: 'Edits',
          permissions: ['ev.read', 'ev.write'],
          region: SUITE_REGION,
        },
      ]);
      await expectStatus(await call('PATCH', '/roles/ev-editor', { permissions: ['ev.write'] }), 200);
      expect(await received('RoleUpdated_v1', { role_name: 'ev-editor' })).toEqual([
        { role_name: 'ev-editor', description: 'Edits', permissions: ['ev.write'] },
        { role_name: 'ev-editor', description: 'Edits', permissions: ['ev.write'], region: SUITE_REGION },
      ]);
      await expectStatus(await call('POST', '/roles', { name: 'ev-gone', permissions: [] }), 201);
      await expectStatus(await call('DELETE', '/roles/ev-gone'), 204);
      expect(await received('RoleDeleted_v1', { role_name: 'ev-gone' })).toEqual([
        { role_name: 'ev-gone' },
        { role_name: 'ev-gone', region: SUITE_REGION },
      ]);
    });

    it("delivers a person's role, permission and consent changes with the new and old lists", async () => {
      await expectStatus(await call('POST', '/roles', { name: 'ev-reader', permissions: ['ev.read'] }), 201);
      const made = await call('POST', '/persons', {
        handles: [{ type: 'username', value: 'ev-person' }],
        region: 'asia-japan',
      });
      await expectStatus(made, 201);
      const person_id: string = made.json.result.person_id;
      await expectStatus(await call('PUT', `/persons/${person_id}/roles`, { roles: ['ev-reader'] }), 204);
      expect(await received('RolesSetToPerson_v1', { person_id, old_roles: [] })).toEqual([
        { new_roles: ['ev-reader'], old_roles: [], person_id },
        // The person's data lives in the person's region.
        { new_roles: ['ev-reader'], old_roles: [], person_id, region: 'asia-japan' },
      ]);
      await expectStatus(
        await call('PUT', `/persons/${person_id}/roles`, { roles: ['ev-editor', 'ev-reader'] }),
        204,
      );
      expect((await received('RolesSetToPerson_v1', { person_id, old_roles: ['ev-reader'] }))[0]).toEqual({
        new_roles: ['ev-editor', 'ev-reader'],
        old_roles: ['ev-reader'],
        person_id,
      });
      await expectStatus(
        await call('PUT', `/persons/${person_id}/additional-permissions`, { permissions: ['ev.read'] }),
        204,
      );
      expect(await received('PermissionsSetToPerson_v1', { person_id })).toEqual([
        { new_permissions: ['ev.read'], old_permissions: [], person_id },
        { new_permissions: ['ev.read'], old_permissions: [], person_id, region: 'asia-japan' },
      ]);

      const put = await call('PUT', `/persons/${person_id}/consent/gdpr`, {
        consent_levels: ['analytics', 'necessary'],
      });
      await expectStatus(put, 200);
      const given = put.json.result.consents;
      expect(await received('GdprConsentsChanged_v1', { person_id, old_gdpr_consents: [] })).toEqual([
        { person_id, new_gdpr_consents: given, old_gdpr_consents: [] },
      ]);
      await expectStatus(await call('DELETE', `/persons/${person_id}/consent/gdpr`), 200);
      expect(await received('GdprConsentsChanged_v1', { person_id, new_gdpr_consents: [] })).toEqual([
        { person_id, new_gdpr_consents: [], old_gdpr_consents: given },
      ]);
    });

    it('publishes nothing for a write refused or one that changes nothing', async () => {
      await until(
        async () => {
          await drain();
          return rx.requests.length === 0;
        },
        2000,
        'the receiver to be drained',
      );
      const before = delivered.length;
      await expectStatus(await call('POST', '/permissions', { name: 'ev.read' }), 409);
      await expectStatus(await call('POST', '/roles', { name: 'ev-x', permissions: ['ev.none'] }), 400);
      await expectStatus(await call('PATCH', '/permissions/ev.read', { description: 'Reads all' }), 200);
      await expectStatus(await call('PATCH', '/roles/ev-editor', {}), 200);
      // A marker: once its events arrive, any event of the writes above would have arrived before it.
      await expectStatus(await call('POST', '/permissions', { name: 'ev.marker' }), 201);
      await received('PermissionCreated_v1', { permission_name: 'ev.marker' });
      expect(
        delivered
          .slice(before)
          .map((d) => d.name)
          .sort(),
      ).toEqual(['PermissionCreated_InRegion_v1', 'PermissionCreated_v1']);
    });
  });
}
