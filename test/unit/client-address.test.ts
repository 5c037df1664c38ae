import { afterEach, describe, expect, it } from 'bun:test';
import { loadConfig } from '../../core/config.ts';
import { addressBucket, clientIpOf } from '../../core/http/client.ts';
import { expectStatus } from '../helpers/expect-status.ts';
import {
  type RecordingIdentityService as IdentityService,
  startRecordingIdentityService as startIdentityService,
} from '../helpers/identity-recorder.ts';

const forwarded = (value: string) => new Headers({ 'x-forwarded-for': value });
const GOOD = 'correct horse battery staple';

describe('the client address', () => {
  it('is the socket address without a trusted proxy, whatever X-Forwarded-For says', () => {
    expect(clientIpOf(forwarded('203.0.113.66'), '198.51.100.7', 0)).toBe('198.51.100.7');
    expect(clientIpOf(new Headers(), '::ffff:127.0.0.1', 0)).toBe('127.0.0.1');
    expect(clientIpOf(forwarded('203.0.113.66'), undefined, 0)).toBeUndefined();
  });

  it('is the entry the outermost trusted proxy appended to X-Forwarded-For', () => {
    const spoofed = forwarded('203.0.113.66, 198.51.100.7, 10.0.0.3');
    expect(clientIpOf(spoofed, '10.0.0.9', 1)).toBe('10.0.0.3');
    expect(clientIpOf(spoofed, '10.0.0.9', 2)).toBe('198.51.100.7');
    expect(clientIpOf(forwarded('198.51.100.7'), '10.0.0.9', 3)).toBe('198.51.100.7');
    expect(clientIpOf(forwarded('[2001:db8::1]:443'), '10.0.0.9', 1)).toBe('2001:db8::1');
    expect(clientIpOf(forwarded('198.51.100.7:5555'), '10.0.0.9', 1)).toBe('198.51.100.7');
    expect(clientIpOf(new Headers(), '10.0.0.9', 1)).toBe('10.0.0.9');
    expect(clientIpOf(forwarded('not-an-address'), '10.0.0.9', 1)).toBeUndefined();
  });

  it('takes TRUSTED_PROXY_HOPS from 0 to 10 and refuses the old CLIENT_IP_HEADER', () => {
    expect(loadConfig({}).trustedProxyHops).toBe(0);
    expect(loadConfig({ TRUSTED_PROXY_HOPS: '2' }).trustedProxyHops).toBe(2);
    expect(() => loadConfig({ TRUSTED_PROXY_HOPS: '11' })).toThrow(
      'TRUSTED_PROXY_HOPS must be an integer from 0 to 10',
    );
    expect(() => loadConfig({ CLIENT_IP_HEADER: 'x-forwarded-for' })).toThrow(
      'CLIENT_IP_HEADER is no longer read: set TRUSTED_PROXY_HOPS',
    );
  });
});

let svc: IdentityService | undefined;
afterEach(async () => {
  await svc?.stop();
  svc = undefined;
});

/** A person with a username and a password, made over the served port. */
async function personWithPassword(
  s: IdentityService,
  username: string,
  headers: Record<string, string> = {},
) {
  const made = await s.request('POST', '/persons', {
    body: { handles: [{ type: 'username', value: username }] },
    headers,
  });
  await expectStatus(made, 201);
  const personId: string = ((await made.json()) as { result: { person_id: string } }).result.person_id;
  await expectStatus(
    await s.request('PUT', `/persons/${personId}/credentials/password`, { body: { password: GOOD } }),
    204,
  );
  return personId;
}

describe('the client address on a real server (Bun)', () => {
  it('reaches events and the token_minted hook as the socket address; a spoofed header is ignored', async () => {
    svc = await startIdentityService({ listen: true });
    const spoof = { 'x-forwarded-for': '203.0.113.66' };
    const personId = await personWithPassword(svc, 'ada', spoof);
    expect((await svc.eventFor('PersonCreated_v1', personId)).analytics_metadata).toMatchObject({
      client_ip_address: '127.0.0.1',
    });

    const signIn = await svc.request('POST', '/authenticate/password', {
      key: null,
      body: { handle: { type: 'username', value: 'ada' }, password: GOOD },
      headers: { ...spoof, origin: 'https://app.example', 'user-agent': 'Probe/1.0' },
    });
    await expectStatus(signIn, 200);
    expect(svc.drafts.at(-1)?.content.request_metadata).toEqual({
      client_ip_address: '127.0.0.1',
      origin: 'https://app.example',
      user_agent: 'Probe/1.0',
    });
    for (const name of ['AuthenticationSucceeded_v1', 'TokenMinted_v1'])
      expect((await svc.eventFor(name, personId)).analytics_metadata).toMatchObject({
        client_ip_address: '127.0.0.1',
      });

    // mint-token used to record 0.0.0.0 wherever the runtime did not say the address.
    svc.events.length = 0;
    await expectStatus(
      await svc.request('POST', `/persons/${personId}/mint-token`, { body: {}, headers: spoof }),
      201,
    );
    const minted = await svc.eventFor('TokenMinted_v1', personId);
    expect(minted).toMatchObject({
      mint_token_api: true,
      analytics_metadata: { client_ip_address: '127.0.0.1' },
    });
  });

  it('honours X-Forwarded-For with TRUSTED_PROXY_HOPS=1', async () => {
    svc = await startIdentityService({ listen: true, env: { TRUSTED_PROXY_HOPS: '1' } });
    const personId = await personWithPassword(svc, 'grace', {
      'x-forwarded-for': '203.0.113.66, 198.51.100.7',
    });
    expect((await svc.eventFor('PersonCreated_v1', personId)).analytics_metadata).toMatchObject({
      client_ip_address: '198.51.100.7',
    });
  });

  it('limits sign-ins per socket address: changing X-Forwarded-For does not dodge it', async () => {
    svc = await startIdentityService({ listen: true, env: { PASSWORD_ADDRESS_RATE_LIMIT: '1/2' } });
    const attempt = (n: number) =>
      svc!.request('POST', '/authenticate/password', {
        key: null,
        body: { handle: { type: 'username', value: `nobody${n}` }, password: 'x' },
        headers: { 'x-forwarded-for': `203.0.113.${n}` },
      });
    await expectStatus(await attempt(1), 401);
    await expectStatus(await attempt(2), 401);
    await expectStatus(await attempt(3), 429);
  });
});

describe('the analytics correlation ID', () => {
  it('is taken from Service- or X-Analytics-Correlation-ID on every route that publishes events', async () => {
    svc = await startIdentityService({ listen: true });
    const prefixed = '0190f5a4-1b2c-7d3e-8f40-5a6b7c8d9e01';
    const plain = '0190F5A4-1B2C-7D3E-8F40-5A6B7C8D9E02';
    const personId = await personWithPassword(svc, 'linus', { 'x-analytics-correlation-id': plain });
    expect((await svc.eventFor('PersonCreated_v1', personId)).analytics_metadata).toMatchObject({
      analytics_correlation_id: plain.toLowerCase(),
    });

    const signIn = await svc.request('POST', '/authenticate/password', {
      key: null,
      body: { handle: { type: 'username', value: 'linus' }, password: GOOD },
      headers: { 'x-analytics-correlation-id': plain },
    });
    await expectStatus(signIn, 200);
    expect((await svc.eventFor('AuthenticationSucceeded_v1', personId)).analytics_metadata).toMatchObject({
      analytics_correlation_id: plain.toLowerCase(),
    });

    // mint-token read neither header; the prefixed one wins when both are sent.
    svc.events.length = 0;
    await expectStatus(
      await svc.request('POST', `/persons/${personId}/mint-token`, {
        body: {},
        headers: { 'service-analytics-correlation-id': prefixed, 'x-analytics-correlation-id': plain },
      }),
      201,
    );
    expect((await svc.eventFor('TokenMinted_v1', personId)).analytics_metadata).toMatchObject({
      analytics_correlation_id: prefixed,
    });

    // Not a UUID: a fresh one, never the text sent.
    svc.events.length = 0;
    await expectStatus(
      await svc.request('POST', `/persons/${personId}/mint-token`, {
        body: {},
        headers: { 'x-analytics-correlation-id': 'not-a-uuid' },
      }),
      201,
    );
    const fresh = (await svc.eventFor('TokenMinted_v1', personId)).analytics_metadata as {
      analytics_correlation_id: string;
    };
    expect(fresh.analytics_correlation_id).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('the rate-limit bucket of a client address', () => {
  it('is an IPv4 address itself, and an IPv6 address its /64', () => {
    expect(addressBucket('198.51.100.7')).toBe('198.51.100.7');
    expect(addressBucket('::ffff:198.51.100.7')).toBe('198.51.100.7');
    for (const ip of ['2001:db8:0:1::7', '2001:DB8:0:1:ffff:1:2:3', '2001:0db8:0000:0001:0:0:0:9'])
      expect(addressBucket(ip)).toBe('2001:db8:0:1::/64');
    expect(addressBucket('2001:db8::')).toBe('2001:db8:0:0::/64');
    expect(addressBucket('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(addressBucket('::1')).toBe('0:0:0:0::/64');
  });
});
