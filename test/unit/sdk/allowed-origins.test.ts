import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { originOf } from '../../../plugins/sdk/store/origins.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { APP, type SdkService, sdkService } from './fixture.ts';

let s: SdkService;
beforeAll(async () => {
  s = await sdkService();
});
afterAll(() => s.stop());

const put = (allowed_origins: unknown, key?: string | null) =>
  s.call('PUT', '/organizations/allowed-origins', {
    body: { allowed_origins },
    ...(key !== undefined ? { key } : {}),
  });

describe('an allowed origin', () => {
  it('is an https origin, or http on a loopback host, stored as browsers send it', () => {
    expect(originOf('https://App.Example.com/')).toBe('https://app.example.com');
    expect(originOf('https://app.example.com:443')).toBe('https://app.example.com');
    expect(originOf('https://app.example.com:8443')).toBe('https://app.example.com:8443');
    expect(originOf('http://localhost:3000')).toBe('http://localhost:3000');
    expect(originOf('http://127.0.0.1:5173/')).toBe('http://127.0.0.1:5173');
    expect(originOf('http://[::1]:8080')).toBe('http://[::1]:8080');
    expect(originOf('https://bücher.example')).toBe('https://xn--bcher-kva.example');
  });

  it('is none with a path, query, fragment, credentials, wildcard, another scheme, or http elsewhere', () => {
    for (const bad of [
      'https://app.example.com/login',
      'https://app.example.com/?x=1',
      'https://app.example.com/#top',
      'https://user:pw@app.example.com',
      'https://*.example.com',
      'ftp://app.example.com',
      'http://app.example.com',
      'app.example.com',
      'null',
      '',
    ])
      expect(originOf(bad)).toBeUndefined();
  });
});

describe('GET, PUT /organizations/allowed-origins', () => {
  it('replaces the list, normalised, sorted and without duplicates, and reads it back', async () => {
    const res = await put([
      'https://b.example/',
      'https://A.example',
      'https://b.example',
      'http://localhost:3000',
    ]);
    await expectStatus(res, 200);
    const list = ['http://localhost:3000', 'https://a.example', 'https://b.example'];
    expect(res.json.result).toEqual({ allowed_origins: list });
    expect((await s.call('GET', '/organizations/allowed-origins')).json.result).toEqual({
      allowed_origins: list,
    });
    await expectStatus(await put([APP]), 200);
    expect((await s.call('GET', '/organizations/allowed-origins')).json.result).toEqual({
      allowed_origins: [APP],
    });
  });

  it('takes effect at once on this replica: a removed origin is refused, an added one answered', async () => {
    await expectStatus(await put(['https://new.example']), 200);
    const load = { event_name: 'ServiceSDKLoaded_v1' };
    const old = await s.sdkEvents(load, { headers: { origin: APP } });
    await expectStatus(old, 403);
    const added = await s.sdkEvents(load, { headers: { origin: 'https://new.example' } });
    await expectStatus(added, 202);
    const preflight = await s.call('OPTIONS', '/sdk/events', {
      key: null,
      orgId: null,
      headers: { origin: APP, 'access-control-request-method': 'POST' },
    });
    await expectStatus(preflight, 403);
    await expectStatus(await put([APP]), 200);
  });

  it('refuses an origin it cannot use with 400 naming it, and changes nothing', async () => {
    for (const [list, says] of [
      [[APP, 'https://app.example.com/login'], 'body.allowed_origins[1]: must be an origin'],
      [['http://app.example.com'], 'body.allowed_origins[0]: must be an origin'],
      [['https://*.example.com'], 'wildcard'],
      [[7], 'body.allowed_origins[0]: must be a string'],
      [
        Array.from({ length: 51 }, (_, i) => `https://a${i}.example`),
        'body.allowed_origins: must hold at most 50 origins',
      ],
      ['https://app.example.com', 'body.allowed_origins: must be an array'],
    ] as const) {
      const res = await put(list);
      await expectStatus(res, 400);
      expect(res.json.errors[0].message).toContain(says);
    }
    const array = await s.call('PUT', '/organizations/allowed-origins', { body: [APP] });
    await expectStatus(array, 400);
    expect((await s.call('GET', '/organizations/allowed-origins')).json.result).toEqual({
      allowed_origins: [APP],
    });
  });

  it('needs the organization API key', async () => {
    await expectStatus(await s.call('GET', '/organizations/allowed-origins', { key: null }), 401);
    await expectStatus(await put([APP], null), 401);
    await expectStatus(await put([APP], 'isk_nope'), 401);
  });
});
