import { describe, expect, it } from 'bun:test';
import { newApiKey, parseApiKey } from '../../core/organizations/api-keys.ts';
import { ensureDevOrganization } from '../../entry/dev-organization.ts';
import { manualClock } from '../helpers/clock.ts';
import { expectStatus } from '../helpers/expect-status.ts';
import { startTestService } from '../helpers/service.ts';

describe('API keys', () => {
  it('are 256 random bits behind the key id, and parse back', () => {
    const id = crypto.randomUUID();
    const { apiKey, secret } = newApiKey(id);
    expect(apiKey).toStartWith('isk_');
    expect(secret).toHaveLength(43);
    expect(parseApiKey(apiKey)).toEqual({ keyId: id, secret });
    expect(parseApiKey(`${apiKey}x`)).toBeNull();
    expect(parseApiKey('isk_short')).toBeNull();
  });

  it('are stored only as a digest', async () => {
    const t = await startTestService();
    try {
      const rows = await t.service.ctx.storage.query<{ digest: string }>(
        (await import('drizzle-orm')).sql`select digest from api_keys`,
      );
      const secret = parseApiKey(t.apiKey)!.secret;
      expect(rows.length).toBeGreaterThan(0);
      for (const r of rows) {
        expect(r.digest).toMatch(/^[0-9a-f]{64}$/);
        expect(r.digest).not.toContain(secret);
      }
    } finally {
      await t.stop();
    }
  });

  it('keep working through a rotation grace period, then stop', async () => {
    const clock = manualClock(Date.now());
    const t = await startTestService({ clock });
    try {
      const { apiKey: fresh } = await t.service.ctx.orgs.rotateKey(t.org.id, 60);
      await expectStatus(await t.call('GET', '/organizations'), 200);
      await expectStatus(await t.call('GET', '/organizations', { key: fresh }), 200);
      clock.advance(61_000);
      await expectStatus(await t.call('GET', '/organizations'), 401);
      await expectStatus(await t.call('GET', '/organizations', { key: fresh }), 200);
    } finally {
      await t.stop();
    }
  });
});

describe('the development organization', () => {
  it('is created and printed once on an empty embedded database', async () => {
    const t = await startTestService({ env: { NODE_ENV: 'development' } });
    try {
      await t.service.ctx.storage.query((await import('drizzle-orm')).sql`delete from organizations`);
      const printed: string[] = [];
      await ensureDevOrganization(t.service, t.config, t.service.ctx.log, (s) => printed.push(s));
      await ensureDevOrganization(t.service, t.config, t.service.ctx.log, (s) => printed.push(s));
      expect(printed).toHaveLength(1);
      const orgId = printed[0]!.match(/Service-OrgID: (\S+)/)![1]!;
      const key = printed[0]!.match(/Service-API-Key: (\S+)/)![1]!;
      expect((await t.call('GET', '/organizations', { orgId, key })).json.result.org_name).toBe(
        'Development',
      );
    } finally {
      await t.stop();
    }
  });

  it('is never created in production', async () => {
    const t = await startTestService({ env: { NODE_ENV: 'production', MAIL_OUTBOX: 'true' } });
    try {
      await t.service.ctx.storage.query((await import('drizzle-orm')).sql`delete from organizations`);
      const printed: string[] = [];
      await ensureDevOrganization(t.service, t.config, t.service.ctx.log, (s) => printed.push(s));
      expect(printed).toHaveLength(0);
    } finally {
      await t.stop();
    }
  });
});

describe('HEADER_PREFIX', () => {
  it("renames the headers, so a client written for the vendor's names works unchanged", async () => {
    const t = await startTestService({ env: { HEADER_PREFIX: 'SlashID' } });
    try {
      expect(t.names.orgId).toBe('SlashID-OrgID');
      const res = await t.service.fetch(
        new Request('http://localhost/organizations', {
          headers: { 'SlashID-OrgID': t.org.id, 'SlashID-API-Key': t.apiKey },
        }),
      );
      await expectStatus(res, 200);
      const old = await t.service.fetch(
        new Request('http://localhost/organizations', {
          headers: { 'Service-OrgID': t.org.id, 'Service-API-Key': t.apiKey },
        }),
      );
      await expectStatus(old, 400);
      expect(((await old.json()) as { errors: Array<{ message: string }> }).errors[0]!.message).toBe(
        'header SlashID-OrgID is required',
      );
    } finally {
      await t.stop();
    }
  });
});
