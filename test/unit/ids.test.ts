import { describe, expect, it } from 'bun:test';
import * as v from 'valibot';
import { uuid } from '../../core/events/formats.ts';
import { isUuid, uuidString, uuidv7 } from '../../core/ids.ts';

describe('the one UUID rule', () => {
  const cases: Array<[string, boolean]> = [
    ['0190a5b4-7c6d-7e8f-9a0b-1c2d3e4f5a6b', true],
    ['0190A5B4-7C6D-7E8F-9A0B-1C2D3E4F5A6B', true],
    ['00000000-0000-0000-0000-000000000000', true],
    ['0190a5b47c6d7e8f9a0b1c2d3e4f5a6b', false],
    ['{0190a5b4-7c6d-7e8f-9a0b-1c2d3e4f5a6b}', false],
    ['0190a5b4-7c6d-7e8f-9a0b-1c2d3e4f5a6g', false],
    ['0190a5b4-7c6d-7e8f-9a0b-1c2d3e4f5a6b\n', false],
    ['', false],
  ];

  it.each(cases)('answers the same for %j in checks, request schemas and event payloads', (text, ok) => {
    expect(isUuid(text)).toBe(ok);
    expect(v.is(uuidString(), text)).toBe(ok);
    expect(v.is(uuid(), text)).toBe(ok);
  });
});

describe('uuidv7', () => {
  it('puts the milliseconds first, version 7 and the RFC 9562 variant, and random bits after', () => {
    const at = Date.UTC(2026, 10, 27, 12, 0, 0, 123);
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const id = uuidv7(at);
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(at);
      seen.add(id.slice(14));
    }
    // 74 random bits: 2,000 ids of one millisecond never repeat.
    expect(seen.size).toBe(2000);
  });

  it('sorts by time as text, and takes a fractional or zero time', () => {
    const ids = [1, 255, 256, 1_700_000_000_000, 1_800_000_000_000.9].map((ms) => uuidv7(ms));
    expect([...ids].sort()).toEqual(ids);
    expect(uuidv7(0).startsWith('00000000-0000-7')).toBe(true);
    expect(Number.parseInt(uuidv7(1_800_000_000_000.9).replace('-', '').slice(0, 12), 16)).toBe(
      1_800_000_000_000,
    );
  });
});
