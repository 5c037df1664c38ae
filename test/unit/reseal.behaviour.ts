import { describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { compactVerify, createLocalJWKSet } from 'jose';
import { ssoCredentials } from '../../core/capabilities/sso-credentials.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { expectStatus } from '../helpers/expect-status.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { appleOptions } from './sso/fixture.ts';

const OLD = `old:${btoa('o'.repeat(32))}`;
const NEW = `new:${btoa('n'.repeat(32))}`;
const RW = '/organizations/attributes/end_user_read_write';
const SSO = '/organizations/sso/oidc/provider-credentials';

/**
 * One database for a test: `storage()` gives each service a handle on it (the same PGlite, or another
 * Postgres pool as another replica would hold); `drop()` removes what is left once the services stop.
 */
export interface ResealDatabase {
  storage(): Promise<Storage>;
  drop(): Promise<void>;
}

export function resealSuite(label: string, database: () => Promise<ResealDatabase>) {
  describe(`secrets reseal (master key rotation) on ${label}`, () => {
    // Each test runs services on one database in turn, with the old key, both keys, the new key.
    async function withServices(body: (start: (masterKey: string) => Promise<TestService>) => Promise<void>) {
      const db = await database();
      const services: TestService[] = [];
      try {
        await body(async (masterKey) => {
          const t = await startTestService({ storage: await db.storage(), env: { MASTER_KEY: masterKey } });
          services.push(t);
          return t;
        });
      } finally {
        for (const t of services.reverse()) await t.stop();
        await db.drop();
      }
    }

    it(
      'seals every stored secret again with the new key, so the old key can be taken out of MASTER_KEY',
      () =>
        withServices(async (start) => {
          const before = await start(OLD);
          await expectStatus(await before.call('PUT', RW, { body: { plan: 'pro', tags: ['eu'] } }), 204);
          const hook = await before.call('POST', '/organizations/webhooks', {
            body: {
              name: 'hook',
              target_url: 'https://hooks.example.com/in',
              custom_headers: { 'X-Secret': ['s3cr3t'] },
            },
          });
          await expectStatus(hook, 201);
          const webhookId = hook.json.result.id as string;
          await before.service.ctx.signer.sign(before.org.id, { sub: 'before' });
          const apple = await appleOptions();
          await expectStatus(
            await before.call('POST', SSO, {
              body: {
                client_id: 'com.acme.web',
                client_secret: 'sso-s3cr3t',
                provider: 'apple',
                options: { apple: apple.options },
              },
            }),
            201,
          );

          const person = await before.call('POST', '/persons', {
            body: { handles: [{ type: 'email_address', value: 'totp@example.com' }] },
          });
          await expectStatus(person, 201);
          const enrolment = await before.call(
            'POST',
            `/persons/${person.json.result.person_id}/credentials/totp`,
          );
          await expectStatus(enrolment, 201);
          const totp = enrolment.json.result as { credential_id: string; secret: string };

          const rotating = await start(`${NEW},${OLD}`);
          const counts = await rotating.service.reseal();
          expect(counts).toEqual({
            'signing_keys.private_sealed': 1,
            'attributes.value': 2,
            'webhooks.custom_headers': 1,
            'sso_credentials.client_secret': 1,
            'sso_credentials.secret_options': 1,
            'oauth2_authorize_codes.id_token': 0,
            'oauth2_authorize_devices.id_token': 0,
            'oauth2_clients.secret_sealed': 0,
            'totp_credentials.secret': 1,
          });
          // Run again: nothing left to do.
          expect(Object.values(await rotating.service.reseal())).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0]);

          const after = await start(NEW);
          {
            const read = await after.call('GET', RW, { orgId: before.org.id, key: before.apiKey });
            await expectStatus(read, 200);
            expect(read.json.result).toEqual({ plan: 'pro', tags: ['eu'] });
            const got = await after.call('GET', `/organizations/webhooks/${webhookId}`, {
              orgId: before.org.id,
              key: before.apiKey,
            });
            expect(got.json.result.custom_headers).toEqual({ 'X-Secret': ['s3cr3t'] });
            // The SSO client secret and Apple's private key open under the new key alone.
            const opened = await after.service.ctx
              .capability(ssoCredentials)
              ?.open(before.org.id, 'com.acme.web');
            expect(opened?.clientSecret).toBe('sso-s3cr3t');
            expect(opened?.options).toMatchObject({ private_key: apple.pem });
            // The TOTP secret opens under the new key alone.
            const [row] = await after.service.ctx.storage.query<{ secret: string }>(
              sql`select secret from totp_credentials where id = ${totp.credential_id}`,
            );
            expect(
              await after.service.ctx.secrets.open(
                row!.secret,
                `totp-credential:${totp.credential_id}:secret`,
              ),
            ).toBe(totp.secret);
            // The signing key opens under the new master key alone: the same kid signs and verifies.
            const jwt = await after.service.ctx.signer.sign(before.org.id, { sub: 'after' });
            const jwks = createLocalJWKSet(await after.service.ctx.signer.jwks(before.org.id));
            const { protectedHeader } = await compactVerify(jwt, jwks);
            expect((await before.service.ctx.signer.jwks(before.org.id)).keys.map((k) => k.kid)).toEqual([
              protectedHeader.kid!,
            ]);
          }
        }),
      60_000,
    );

    it(
      'leaves a value written while it runs to the writer',
      () =>
        withServices(async (start) => {
          const before = await start(OLD);
          await before.call('PUT', RW, { body: { a: 1 } });
          const rotating = await start(`${NEW},${OLD}`);
          {
            // A write and a reseal race: whichever lands, the value read after is the written one.
            const [written] = await Promise.all([
              rotating.call('PUT', RW, { orgId: before.org.id, key: before.apiKey, body: { a: 2 } }),
              rotating.service.reseal(),
            ]);
            await expectStatus(written, 204);
            const read = await rotating.call('GET', RW, { orgId: before.org.id, key: before.apiKey });
            expect(read.json.result).toEqual({ a: 2 });
            expect(Object.values(await rotating.service.reseal())).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0]);
          }
        }),
      60_000,
    );
  });
}
