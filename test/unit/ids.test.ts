import { describe, expect, it } from 'bun:test';
import * as v from 'valibot';
import { uuid } from '../../core/events/formats.ts';
import { isUuid, uuidString } from '../../core/ids.ts';

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
