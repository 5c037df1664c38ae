import { describe, expect, it } from 'bun:test';
import { DeliveryFailure } from '../../adapters/fetch-delivery/errors.ts';
import { createFetchDelivery } from '../../adapters/fetch-delivery/index.ts';
import { vetAddresses } from '../../adapters/fetch-delivery/resolve.ts';
import { createLogger } from '../../core/log.ts';
import {
  bareHost,
  classifyAddress,
  createSsrfPolicy,
  isIpLiteralHost,
  isLocalhostName,
} from '../../core/net/address.ts';

const none = createSsrfPolicy([]);

describe('SSRF classification', () => {
  // [address, range ipaddr.js (or our IPv6 rule) puts it in]
  const refused: Array<[string, string]> = [
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['100.127.255.255', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['198.19.255.255', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'linkLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['ff02::1', 'multicast'],
    ['fec0::1', 'deprecatedSiteLocal'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    ['::ffff:0:7f00:1', 'rfc6145'],
    ['64:ff9b::7f00:1', 'rfc6052'],
    ['64:ff9b:1::a00:1', 'rfc6052'],
    ['2002:7f00:1::', '6to4'],
    ['2001:0:4136:e378::1', 'teredo'],
    ['2001:db8::1', 'reserved'],
    ['2001:2::1', 'benchmarking'],
    ['100::1', 'discard'],
    ['::7f00:1', 'ipv4Compatible'],
    // ipaddr.js reads a dotted tail as the embedded IPv4 (URLs normalise it to ::7f00:1 before we see it).
    ['::127.0.0.1', 'loopback'],
    ['4000::1', 'unassigned'],
  ];
  for (const [address, range] of refused)
    it(`refuses ${address} as ${range}`, () => {
      const verdict = none.check(address);
      expect(verdict.allowed).toBe(false);
      expect(verdict.range).toBe(range);
    });

  const allowed = ['8.8.8.8', '1.1.1.1', '93.184.215.14', '2606:4700::1', '2a00:1450:4001:80b::200e'];
  for (const address of allowed)
    it(`allows the public address ${address}`, () => {
      expect(none.check(address)).toMatchObject({ allowed: true, range: 'unicast' });
    });

  it('classifies IPv4-mapped IPv6 as the IPv4 it embeds, in canonical form', () => {
    expect(classifyAddress('::ffff:7f00:1')).toEqual({
      address: '127.0.0.1',
      kind: 'ipv4',
      range: 'loopback',
    });
    expect(classifyAddress('::ffff:8.8.8.8')).toEqual({ address: '8.8.8.8', kind: 'ipv4', range: 'unicast' });
    expect(classifyAddress('[::1]')).toEqual({ address: '::1', kind: 'ipv6', range: 'loopback' });
  });

  it('refuses text that is not an IP address', () => {
    expect(classifyAddress('hooks.test')).toBeUndefined();
    expect(none.check('hooks.test')).toMatchObject({ allowed: false, range: 'invalid' });
  });
});

describe('allowPrivate', () => {
  const policy = createSsrfPolicy(['127.0.0.0/8', '::1/128', '10.1.0.0/16']);

  it('allows exactly the ranges it names', () => {
    expect(policy.check('127.0.0.1')).toMatchObject({ allowed: true, allowedBy: '127.0.0.0/8' });
    expect(policy.check('127.9.9.9').allowed).toBe(true);
    expect(policy.check('::1')).toMatchObject({ allowed: true, allowedBy: '::1/128' });
    expect(policy.check('10.1.200.3').allowed).toBe(true);
    expect(policy.check('10.2.0.1').allowed).toBe(false);
    expect(policy.check('192.168.0.1').allowed).toBe(false);
    expect(policy.check('169.254.169.254').allowed).toBe(false);
    expect(policy.check('fc00::1').allowed).toBe(false);
  });

  it('matches an IPv4-mapped address against the IPv4 range', () => {
    expect(policy.check('::ffff:127.0.0.1').allowed).toBe(true);
    expect(policy.check('::ffff:7f00:1')).toMatchObject({ allowed: true, address: '127.0.0.1' });
  });

  it('accepts an allowance written as IPv4-mapped IPv6', () => {
    expect(createSsrfPolicy(['::ffff:127.0.0.0/104']).check('127.0.0.1').allowed).toBe(true);
  });

  it('does not let an IPv4 range cover other IPv6 spellings that reach it', () => {
    expect(policy.check('64:ff9b::7f00:1').allowed).toBe(false);
    expect(policy.check('2002:7f00:1::').allowed).toBe(false);
  });

  it('rejects a CIDR it cannot parse', () => {
    expect(() => createSsrfPolicy(['127.0.0.1/33'])).toThrow();
    expect(() => createSsrfPolicy(['not-a-cidr'])).toThrow();
  });
});

describe('target host checks', () => {
  // URL hostnames: the WHATWG parser normalises IPv4 spellings first.
  const hostOf = (url: string) => new URL(url).hostname;

  it('recognises IP literals in every spelling the URL parser accepts', () => {
    for (const url of [
      'https://127.0.0.1/',
      'https://0x7f.1/',
      'https://2130706433/',
      'https://127.1/',
      'https://017700000001/',
      'https://[::1]/',
      'https://[::ffff:127.0.0.1]/',
    ])
      expect(isIpLiteralHost(hostOf(url))).toBe(true);
    expect(hostOf('https://0x7f.1/')).toBe('127.0.0.1');
  });

  it('does not take a hostname for an IP literal', () => {
    expect(isIpLiteralHost(hostOf('https://hooks.example.com/'))).toBe(false);
    expect(isIpLiteralHost(hostOf('https://1.2.3.4.example.com/'))).toBe(false);
  });

  it('recognises localhost names', () => {
    expect(isLocalhostName('localhost')).toBe(true);
    expect(isLocalhostName('LOCALHOST.')).toBe(true);
    expect(isLocalhostName('api.localhost')).toBe(true);
    expect(isLocalhostName('localhost.example.com')).toBe(false);
  });

  it('strips every trailing dot, so localhost.. is still localhost', () => {
    expect(isLocalhostName('localhost..')).toBe(true);
    expect(isLocalhostName('API.LOCALHOST...')).toBe(true);
    expect(bareHost('Hooks.Test..')).toBe('hooks.test');
    expect(bareHost('[::1]')).toBe('::1');
  });
});

describe('vetting every resolved address', () => {
  const strict = createSsrfPolicy([]);

  it('refuses a name when any one of its addresses is not public', () => {
    for (const answer of [
      ['8.8.8.8', '127.0.0.1'],
      ['10.0.0.1', '8.8.8.8'],
      ['2606:4700::1', 'fd00::1'],
    ])
      expect(() => vetAddresses('mixed.example', answer, strict, false)).toThrow(
        /resolves to a refused \(non-public\) address/,
      );
  });

  it('names the resolved addresses in the detail for the log, never in the message a tenant sees', () => {
    try {
      vetAddresses('inside.example', ['8.8.8.8', '10.1.2.3'], strict, false);
    } catch (e) {
      const failure = e as DeliveryFailure;
      expect(failure.message).not.toContain('10.1.2.3');
      expect(failure.message).not.toContain('8.8.8.8');
      expect(failure.detail).toContain('inside.example resolves to 8.8.8.8, 10.1.2.3: 10.1.2.3');
      return;
    }
    throw new Error('expected a refusal');
  });

  it('pins an IPv4 answer when there is one, with the name for SNI', () => {
    expect(vetAddresses('dual.example', ['2606:4700::1', '1.1.1.1'], strict, false)).toEqual({
      address: '1.1.1.1',
      serverName: 'dual.example',
    });
  });

  it('pins the embedded IPv4 of a mapped literal, with no server name', () => {
    const policy = createSsrfPolicy(['127.0.0.0/8']);
    expect(vetAddresses('::ffff:7f00:1', ['::ffff:7f00:1'], policy, true)).toEqual({
      address: '127.0.0.1',
      serverName: undefined,
    });
  });

  it('refuses as ssrf_refused, never as another kind', () => {
    try {
      vetAddresses('x.example', ['169.254.169.254'], strict, false);
    } catch (e) {
      expect(e).toBeInstanceOf(DeliveryFailure);
      expect((e as DeliveryFailure).kind).toBe('ssrf_refused');
      return;
    }
    throw new Error('expected a refusal');
  });
});

describe('the allowances at start', () => {
  const started = (allowPrivate: string[]) => {
    const lines: Array<{ level: string; msg: string; allowPrivate?: string[] }> = [];
    const log = createLogger('debug', {}, (line) => lines.push(JSON.parse(line)));
    void createFetchDelivery({ allowPrivate, hostMap: {}, log }).close();
    return lines;
  };

  it('logs every allowed private range in one warn line', () => {
    expect(started(['127.0.0.0/8', '::1/128'])).toEqual([
      expect.objectContaining({
        level: 'warn',
        msg: 'deliveries may reach these private ranges (DELIVERY_ALLOW_PRIVATE)',
        allowPrivate: ['127.0.0.0/8', '::1/128'],
      }),
    ]);
  });

  it('logs nothing when no private range is allowed', () => {
    expect(started([])).toEqual([]);
  });
});
