import { describe, expect, it } from 'bun:test';
import fc from 'fast-check';
import { readForm } from '../../../plugins/oauth2/tokens/form.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const request = new Request('http://localhost/oauth2/tokens', { method: 'POST', headers: FORM });

/** What RFC 6749 asks of a form, by the WHATWG parser: each name once, empty values as absent. */
function expected(body: string): Map<string, string> | 'duplicate' {
  const seen = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(body)) {
    if (seen.has(name)) return 'duplicate';
    seen.set(name, value);
  }
  for (const [name, value] of seen) if (value === '') seen.delete(name);
  return seen;
}

describe('the OAuth form reader', () => {
  it('reads every form as the WHATWG parser does, with or without encoded characters', () => {
    const piece = fc.constantFrom(
      'a',
      'b',
      'scope',
      '=',
      '&',
      '%20',
      '%',
      '%zz',
      '+',
      'é',
      '%C3%A9',
      ' ',
      '',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 16 }), (pieces) => {
        const body = pieces.join('');
        const want = expected(body);
        if (want === 'duplicate') expect(() => readForm(request, body)).toThrow('is given more than once');
        else expect(readForm(request, body)).toEqual(want);
      }),
      { numRuns: 3000 },
    );
  });
});
