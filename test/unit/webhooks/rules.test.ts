import { describe, expect, it } from 'bun:test';
import { backoffMs, nextAfterFailure, RETRY_WINDOW_MS } from '../../../core/delivery/retry-schedule.ts';
import { formatDuration, parseDuration, parseTimeout } from '../../../plugins/webhooks/api/duration.ts';
import { canonicalTrigger } from '../../../plugins/webhooks/api/trigger-input.ts';
import { customHeaderProblems } from '../../../plugins/webhooks/store/custom-headers.ts';

describe('timeout durations', () => {
  it.each([
    ['500ms', 500e6],
    ['10s', 10e9],
    ['1m', 60e9],
    ['1.5s', 1.5e9],
    ['1m30s', 90e9],
    ['250us', 250e3],
    ['250µs', 250e3],
    ['100ns', 100],
    ['0', 0],
    ['-1s', -1e9],
    ['2h', 7200e9],
    // Fractions truncate per part, computed as Go does (not rounded, no float drift).
    ['1.5ns', 1],
    ['0.3s', 300e6],
    ['.5ms', 500e3],
    ['1.0000000001s', 1e9],
    ['1.999999999s', 1_999_999_999],
  ])('reads %s as Go does', (text, ns) => {
    expect(parseDuration(text)).toBe(ns);
  });

  it.each(['', '10', 's', '1x', '1 s', '1s ', '.s', '1.2.3s'])('does not read %j', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });

  it.each([
    [0, '0s'],
    [500e6, '500ms'],
    [10e9, '10s'],
    [1.5e9, '1.5s'],
    [90e9, '1m30s'],
    [20e9, '20s'],
    [250e3, '250µs'],
    [3600e9, '1h0m0s'],
  ])('formats %d ns as %s', (ns, text) => {
    expect(formatDuration(ns)).toBe(text);
  });

  it('takes a timeout above 0 and at most 20 s', () => {
    expect(parseTimeout('20s')).toEqual({ ns: 20e9 });
    expect(parseTimeout('1ms')).toEqual({ ns: 1e6 });
    expect(parseTimeout('20001ms')).toMatchObject({ problem: expect.stringContaining('at most 20s') });
    expect(parseTimeout('0s')).toEqual({ ns: null });
    expect(parseTimeout('0ms')).toEqual({ ns: null });
    expect(parseTimeout('-5s')).toMatchObject({ problem: expect.stringContaining('must not be negative') });
    expect(parseTimeout('soon')).toMatchObject({ problem: expect.stringContaining('duration') });
  });
});

describe('custom headers', () => {
  it('accepts valid names and values', () => {
    expect(
      customHeaderProblems({ 'X-Token': ['abc'], Authorization: ['Bearer x y'], 'x-multi': ['a', 'b'] }),
    ).toEqual([]);
  });

  it.each([
    'Host',
    'content-length',
    'Content-Type',
    'transfer-encoding',
    'Connection',
    'Keep-Alive',
    'Upgrade',
    'TE',
  ])('refuses the transport header %s', (name) => {
    expect(customHeaderProblems({ [name]: ['x'] }).join()).toContain('may not be set');
  });

  it('refuses invalid names and values, naming each', () => {
    const problems = customHeaderProblems({
      'Bad Name': ['x'],
      'X-Newline': ['a\r\nInjected: 1'],
      'X-Empty': [],
      'X-Space': [' padded '],
      'X-Unicode': ['é'],
      'X-Dup': ['a'],
      'x-dup': ['b'],
    });
    const text = problems.join('\n');
    expect(text).toContain('"Bad Name" is not a valid header name');
    expect(text).toContain('"X-Newline"[0] must be visible ASCII');
    expect(text).toContain('"X-Empty" must be a non-empty array');
    expect(text).toContain('"X-Space"[0]');
    expect(text).toContain('"X-Unicode"[0]');
    expect(text).toContain('"x-dup" is given twice');
  });

  it('refuses anything but an object of headers, naming what came', () => {
    for (const [value, kind] of [
      [[], 'an array'],
      [[['X-A', ['a']]], 'an array'],
      [null, 'null'],
      ['X-A: a', 'a string'],
    ] as const)
      expect(customHeaderProblems(value)).toEqual([
        `must be an object of header name to an array of strings (got ${kind})`,
      ]);
  });

  it('refuses __proto__ and keeps constructor and prototype, which are valid header names', () => {
    expect(customHeaderProblems(JSON.parse('{"__proto__": ["x"]}'))).toEqual([
      '"__proto__" is not accepted as a header name',
    ]);
    expect(customHeaderProblems(JSON.parse('{"constructor": ["c"], "prototype": ["p"]}'))).toEqual([]);
    expect(customHeaderProblems(JSON.parse('{"constructor": "c"}'))).toEqual([
      '"constructor" must be a non-empty array of strings',
    ]);
  });

  it('bounds the number and size of headers', () => {
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`X-H${i}`, ['v']]));
    expect(customHeaderProblems(many).join()).toContain('at most 32 headers');
    expect(customHeaderProblems({ 'X-Big': ['v'.repeat(5000)] }).join()).toContain('at most 4096');
  });
});

describe('the retry schedule', () => {
  const MIN = 60_000;
  it('backs off 1, 2, 4, 8, then 10 minutes', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 50].map(backoffMs)).toEqual(
      [1, 2, 4, 8, 10, 10, 10, 10].map((m) => m * MIN),
    );
  });

  it('retries while the next attempt is within 30 minutes of the first, then drops', () => {
    // Attempts start at 0, 1, 3, 7, 15 and 25 minutes; the next would be at 35.
    let at = 0;
    const starts = [0];
    for (let n = 1; ; n++) {
      const next = nextAfterFailure(n, at, 0);
      if ('drop' in next) break;
      at = next.retryAt;
      starts.push(at / MIN);
    }
    expect(starts).toEqual([0, 1, 3, 7, 15, 25]);
    expect(RETRY_WINDOW_MS).toBe(30 * MIN);
  });

  it('keeps the schedule anchored to the first attempt when an attempt runs late', () => {
    // The third attempt, due at 3 minutes, ran at 5: the fourth is still due at 7, not at 9.
    expect(nextAfterFailure(3, 5 * MIN, 0)).toEqual({ retryAt: 7 * MIN });
    // Never sooner than a minute after the attempt before it.
    expect(nextAfterFailure(3, 6.5 * MIN, 0)).toEqual({ retryAt: 7.5 * MIN });
    // A fifth attempt that ran at 29.5 minutes would push the sixth past the window.
    expect(nextAfterFailure(5, 29.5 * MIN, 0)).toEqual({ drop: true });
    expect(nextAfterFailure(6, 25 * MIN, 0)).toEqual({ drop: true });
  });
});

describe('trigger names', () => {
  it('stores both spellings of the MITM trigger as one', () => {
    expect(canonicalTrigger('event', 'MitmAttackDetectedV1')).toEqual(
      canonicalTrigger('event', 'MitmAttackDetected_v1'),
    );
  });

  it('refuses cloud-provider and unknown names, listing the accepted ones', () => {
    for (const name of [
      'AWSIAMRoleCreated_v1',
      'GCPServiceAccountCreated_v1',
      'ActiveDirectorySPNDeleted_v1',
      'Nope_v1',
    ]) {
      expect(() => canonicalTrigger('event', name)).toThrow(
        /accepted: AuthenticationSucceeded_v1, .*MitmAttackDetectedV1/,
      );
    }
  });

  it('knows token_minted as the only sync hook', () => {
    expect(canonicalTrigger('sync_hook', 'token_minted')).toEqual({
      triggerType: 'sync_hook',
      triggerName: 'token_minted',
    });
    expect(() => canonicalTrigger('sync_hook', 'identify_user')).toThrow(/only one is token_minted/);
    expect(() => canonicalTrigger('webhook', 'token_minted')).toThrow(/event or sync_hook/);
  });
});
