/**
 * Property tests over Unicode edge cases: what the API accepts it gives back byte for byte, and what it
 * refuses gets a 400 naming the rule. Runs are bounded so the file takes a few seconds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import fc from 'fast-check';
import { isWellFormedText } from '../../core/text.ts';
import { attributes } from '../../plugins/attributes/index.ts';
import { webhooks } from '../../plugins/webhooks/index.ts';
import { expectStatus } from '../helpers/expect-status.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const RW = '/organizations/attributes/end_user_read_write';
const utf8 = (s: string) => Buffer.byteLength(s, 'utf8');

/** Pieces that break naive text handling: BOM, ZWJ sequences, bidi controls, combining marks, ... */
const EDGES = [
  '\uFEFF',
  '\u200D',
  '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}',
  '\u{1F3F3}\uFE0F\u200D\u{1F308}',
  '\u202E',
  '\u202D',
  '\u2066',
  '\u2069',
  '\u200F',
  '\u061C',
  'e\u0301',
  '\u0301',
  '\u0338\u0338\u0338',
  '\u00E9',
  '\u20AC',
  '\u{1F600}',
  '\u2028',
  '\u2029',
  '\u00A0',
  '\u0085',
  '\uFFFE',
  '\uFFFF',
  '\u001F',
  '\u007F',
  '"',
  '\\',
  ' ',
  'a',
  'Z',
  '.',
  '/',
];
/** What Postgres text cannot hold: NUL and surrogates without their pair. Rarer, so most texts pass. */
const HAZARDS = ['\u0000', '\uD800', '\uDBFF', '\uDC00', '\uDFFF'];

const piece = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...EDGES) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 3 }) },
  { weight: 1, arbitrary: fc.constantFrom(...HAZARDS) },
);
const edgeText = (maxPieces: number) =>
  fc.array(piece, { maxLength: maxPieces }).map((parts) => parts.join(''));

/** Names of 68 to 72 bytes of UTF-8, ending on characters of 1 to 4 bytes: the 70-byte limit's edge. */
const nearSeventyBytes = fc
  .tuple(fc.constantFrom('a', '\u00E9', '\u20AC', '\u{1F600}', 'e\u0301'), fc.integer({ min: 68, max: 72 }))
  .map(([unit, target]) => {
    let s = '';
    while (utf8(s) + utf8(unit) <= target) s += unit;
    return s + 'k'.repeat(target - utf8(s));
  });

/** The rule an attribute name breaks on write, as the 400 words it; null when it may be written. */
function attributeNameRule(name: string): string | null {
  if (name.length === 0) return 'an attribute name must be 1 to 70 bytes of UTF-8 (got an empty name)';
  if (!isWellFormedText(name)) return 'is not well-formed Unicode (a lone surrogate)';
  if (name.includes('\u0000')) return 'contains U+0000, which cannot be stored';
  if (utf8(name) > 70) return `is ${utf8(name)} bytes of UTF-8; the limit is 70 bytes`;
  if (name.startsWith('\uFEFF')) return 'begins with U+FEFF (a byte order mark)';
  return null;
}

/** The rule a webhook's name or description breaks, as the 400 words it; null when it is accepted. */
function webhookTextRule(field: 'name' | 'description', text: string): string | null {
  if (field === 'name' && text.length === 0) return 'must not be empty';
  const max = field === 'name' ? 200 : 2000;
  if (text.length > max) return `must be at most ${max} characters`;
  if (text.includes('\u0000')) return 'must not contain the NUL character';
  if (!isWellFormedText(text)) return 'must be well-formed Unicode';
  if (text.startsWith('\uFEFF')) return 'must not begin with U+FEFF (a byte order mark)';
  return null;
}

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ definition: { plugins: [attributes(), webhooks()] } });
});
afterAll(async () => {
  await t.stop();
});

const message = (r: { json: { errors?: Array<{ message: string }> } }) => r.json?.errors?.[0]?.message ?? '';

describe('attribute keys and values over Unicode edge cases', () => {
  it('read back byte for byte what a PUT accepted, and a refused key gets a 400 naming its rule', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(edgeText(12), nearSeventyBytes), async (key) => {
        const put = await t.call('PUT', RW, { body: { [key]: key } });
        const rule = attributeNameRule(key);
        if (rule === null) {
          await expectStatus(put, 204);
          const got = await t.call('GET', RW);
          await expectStatus(got, 200);
          expect(Object.keys(got.json.result)).toEqual([key]);
          expect(got.json.result[key]).toBe(key);
        } else {
          await expectStatus(put, 400);
          expect(message(put)).toContain(rule);
        }
      }),
      {
        numRuns: 150,
        examples: [['\uFEFF'], ['\uFEFFk'], ['k\uFEFF'], ['\u0000'], ['\uD800'], ['\u200D'], ['']],
      },
    );
  });

  it('read back any value as it was written: BOM, NUL and lone surrogates included', async () => {
    const hazardous = fc
      .array(fc.oneof(piece, fc.constantFrom(...HAZARDS)), { maxLength: 40 })
      .map((parts) => parts.join(''));
    const value = fc.oneof(
      hazardous,
      fc.array(edgeText(6), { maxLength: 4 }),
      fc.dictionary(edgeText(4), edgeText(6), { maxKeys: 4 }),
    );
    await fc.assert(
      fc.asyncProperty(value, async (v) => {
        await expectStatus(await t.call('PUT', RW, { body: { k: v } }), 204);
        const got = await t.call('GET', RW);
        await expectStatus(got, 200);
        expect(got.json.result).toEqual({ k: v });
      }),
      { numRuns: 100, examples: [['\uFEFF'], ['\uFEFF\uFEFF'], ['\u0000'], ['\uDC00x']] },
    );
  });

  it('refuses to write a key with a leading U+FEFF, and takes one in a DELETE (one stored before the rule)', async () => {
    const put = await t.call('PUT', RW, { body: { '\uFEFFplan': 1 } });
    await expectStatus(put, 400);
    expect(message(put)).toBe(
      'body: attribute name "\uFEFFplan" begins with U+FEFF (a byte order mark), which a name may not begin with',
    );
    const del = await t.call('DELETE', `${RW}?attributes=${encodeURIComponent('\uFEFFplan')}`);
    await expectStatus(del, 204);
  });
});

describe('webhook name and description over Unicode edge cases', () => {
  it('read back byte for byte what a create accepted, and a refused one gets a 400 naming field and rule', async () => {
    await fc.assert(
      fc.asyncProperty(edgeText(10), edgeText(10), async (name, description) => {
        const made = await t.call('POST', '/organizations/webhooks', {
          body: { name, description, target_url: 'https://hooks.example.com/unicode' },
        });
        const nameRule = webhookTextRule('name', name);
        const descriptionRule = webhookTextRule('description', description);
        if (nameRule === null && descriptionRule === null) {
          await expectStatus(made, 201);
          const id = made.json.result.id;
          const got = await t.call('GET', `/organizations/webhooks/${id}`);
          await expectStatus(got, 200);
          expect({ name: got.json.result.name, description: got.json.result.description }).toEqual({
            name,
            description,
          });
          await expectStatus(await t.call('DELETE', `/organizations/webhooks/${id}`), 204);
        } else {
          await expectStatus(made, 400);
          const [field, rule] = nameRule !== null ? ['name', nameRule] : ['description', descriptionRule];
          expect(message(made)).toContain(`body.${field}: ${rule}`);
        }
      }),
      {
        numRuns: 60,
        examples: [
          ['\uFEFFname', 'd'],
          ['name', '\uFEFFd'],
          ['n\uFEFF', '\uFEFF'],
          ['\u202Eevil', '\u0301'],
        ],
      },
    );
  });
});
