/** Limits and the guard, part of the attribute buckets' behaviour suite (attributes.behaviour.ts). */
import { describe, expect, it } from 'bun:test';
import { expectStatus } from '../helpers/expect-status.ts';
import type { CallOptions, TestService } from '../helpers/service.ts';

const RW = '/organizations/attributes/end_user_read_write';
const bytes = (s: string) => new TextEncoder().encode(s).length;

export function attributesLimits(label: string, service: () => TestService) {
  const call = (method: string, path: string, opts?: CallOptions) => service().call(method, path, opts);

  describe(`attribute buckets on ${label}: limits`, () => {
    // Each name is exactly 70 bytes of UTF-8 with 2-, 3- and 4-byte characters at the edge.
    const at70 = ['k'.repeat(70), 'é'.repeat(35), `${'€'.repeat(23)}a`, `${'😀'.repeat(17)}ab`];
    const at71 = ['k'.repeat(71), `${'é'.repeat(35)}a`, `${'€'.repeat(23)}ab`, `${'😀'.repeat(17)}abc`];

    it('accepts attribute names of exactly 70 bytes of UTF-8, whatever their characters', async () => {
      for (const name of at70) expect(bytes(name)).toBe(70);
      const body = Object.fromEntries(at70.map((k, i) => [k, i]));
      await expectStatus(await call('PUT', RW, { body }), 204);
      expect((await call('GET', RW)).json.result).toEqual(body);
      const one = await call('GET', `${RW}?attributes=${encodeURIComponent(at70[3]!)}`);
      expect(one.json.result).toEqual({ [at70[3]!]: 3 });
    });

    it.each(at71.map((k) => [k.length, k]))(
      'refuses a name of 71 bytes (%d UTF-16 units) with 400, naming the key, its size and the limit',
      async (_, name) => {
        expect(bytes(name)).toBe(71);
        await call('PUT', RW, { body: { before: 1 } });
        for (const method of ['PUT', 'PATCH']) {
          const r = await call(method, RW, { body: { [name]: 1 } });
          await expectStatus(r, 400);
          expect(r.json.errors[0].message).toBe(
            `body: attribute name ${JSON.stringify(name)} is 71 bytes of UTF-8; the limit is 70 bytes`,
          );
        }
        expect((await call('GET', RW)).json.result).toEqual({ before: 1 });
      },
    );

    it('refuses an empty name, a name with U+0000 and one with a lone surrogate', async () => {
      for (const [raw, message] of [
        ['{"":1}', 'an attribute name must be 1 to 70 bytes of UTF-8 (got an empty name)'],
        ['{"a\\u0000b":1}', 'contains U+0000'],
        ['{"\\ud800x":1}', 'not well-formed Unicode'],
      ] as const) {
        const r = await call('PUT', RW, { raw, headers: { 'content-type': 'application/json' } });
        await expectStatus(r, 400);
        expect(r.json.errors[0].message).toContain(message);
      }
    });

    it('cuts a huge name short in the message but still says how long it was', async () => {
      const name = 'n'.repeat(10_000);
      const r = await call('PUT', RW, { body: { [name]: 1 } });
      await expectStatus(r, 400);
      const message: string = r.json.errors[0].message;
      expect(message.length).toBeLessThan(200);
      expect(message).toBe(
        `body: attribute name "${'n'.repeat(64)}…" is 10000 bytes of UTF-8; the limit is 70 bytes`,
      );
    });

    it('accepts a value of exactly 65536 bytes serialized and refuses 65537, naming the key and the limit', async () => {
      // A JSON string's quotes count: 65534 characters serialize to 65536 bytes.
      await expectStatus(await call('PUT', RW, { body: { big: 'x'.repeat(65_534) } }), 204);
      expect((await call('GET', RW)).json.result.big).toHaveLength(65_534);
      const over = await call('PATCH', RW, { body: { big: 'x'.repeat(65_535) } });
      await expectStatus(over, 400);
      expect(over.json.errors[0].message).toBe(
        'body: attribute "big" is 65537 bytes as JSON; the limit is 65536 bytes (64 KiB)',
      );
      expect((await call('GET', RW)).json.result.big).toHaveLength(65_534);
    });

    it('counts a value in UTF-8 bytes of its compact JSON, not in characters', async () => {
      // 21844 three-byte characters and the quotes: 65534 bytes; one more character is 65537.
      await expectStatus(await call('PUT', RW, { body: { v: '€'.repeat(21_844) } }), 204);
      const r = await call('PUT', RW, { body: { v: '€'.repeat(21_845) } });
      await expectStatus(r, 400);
      expect(r.json.errors[0].message).toContain('is 65537 bytes as JSON');
      // Whitespace the client sent does not count: the value is measured as compact JSON.
      const spaced = `{"v": [${Array(30_000).fill(' 1').join(',')}]}`;
      expect(bytes(spaced)).toBeGreaterThan(65_536 + 10);
      expect(
        (await call('PUT', RW, { raw: spaced, headers: { 'content-type': 'application/json' } })).status,
      ).toBe(204);
    });

    it('refuses a number JSON cannot carry back', async () => {
      const r = await call('PUT', RW, {
        raw: '{"n":1e400}',
        headers: { 'content-type': 'application/json' },
      });
      await expectStatus(r, 400);
      expect(r.json.errors[0].message).toBe(
        'body: attribute "n" holds a number beyond the range of a double (such as 1e400; the largest is about 1.8e308), which JSON cannot carry',
      );
    });

    it('lists several problems at once, the first ten and a count of the rest', async () => {
      const body = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`${'z'.repeat(71)}${i}`, i]));
      const r = await call('PUT', RW, { body });
      await expectStatus(r, 400);
      const message: string = r.json.errors[0].message;
      expect(message.match(/the limit is 70 bytes/g)).toHaveLength(10);
      expect(message).toEndWith('; and 2 more problems');
    });

    it('refuses a body that is not a JSON object of attributes', async () => {
      for (const [raw, got] of [
        ['[1,2]', 'an array'],
        ['"text"', 'a string'],
        ['7', 'a number'],
        ['null', 'null'],
      ]) {
        const r = await call('PUT', RW, { raw, headers: { 'content-type': 'application/json' } });
        await expectStatus(r, 400);
        expect(r.json.errors[0].message).toBe(`body must be a JSON object of attributes (got ${got})`);
      }
      const broken = await call('PUT', RW, { raw: '{"a":', headers: { 'content-type': 'application/json' } });
      await expectStatus(broken, 400);
      expect(broken.json.errors[0].message).toStartWith('request body must be JSON');
    });

    it('reads the body as JSON whatever its content type says, as curl -d sends it', async () => {
      const form = { 'content-type': 'application/x-www-form-urlencoded' };
      await expectStatus(await call('PUT', RW, { raw: '{"via":"curl"}', headers: form }), 204);
      expect((await call('GET', RW)).json.result).toEqual({ via: 'curl' });
      const notJson = await call('PUT', RW, { raw: 'via=curl', headers: form });
      await expectStatus(notJson, 400);
      expect((await call('GET', RW)).json.result).toEqual({ via: 'curl' });
    });

    it('caps the attributes of one request and of one bucket, naming the limit', async () => {
      const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`a${i}`, i]));
      const request = await call('PATCH', RW, { body: many(1001) });
      await expectStatus(request, 400);
      expect(request.json.errors[0].message).toBe(
        'the request carries 1001 attributes; the limit is 1000 a request',
      );
      const bucket = await call('PUT', RW, { body: many(51) });
      await expectStatus(bucket, 400);
      expect(bucket.json.errors[0].message).toBe(
        'the request puts 51 attributes in one bucket; the limit is 50 a bucket',
      );
      await expectStatus(await call('PUT', RW, { body: many(50) }), 204);
      const merged = await call('PATCH', RW, { body: { one_more: true } });
      await expectStatus(merged, 400);
      expect(merged.json.errors[0].message).toBe(
        'bucket end_user_read_write would hold 51 attributes; the limit is 50 a bucket',
      );
      expect(Object.keys((await call('GET', RW)).json.result)).toHaveLength(50);
      // Overwriting existing keys does not grow the bucket.
      await expectStatus(await call('PATCH', RW, { body: { a0: 'again' } }), 204);
      await call('PUT', RW, { body: {} });
    });

    it('answers 413 for a body over BODY_LIMIT', async () => {
      const r = await call('PUT', RW, { body: { big: 'x'.repeat(1_100_000) } });
      await expectStatus(r, 413);
    });

    it('never answers 422 or 500 to any of the bad bodies above', async () => {
      for (const raw of [
        '{"":1}',
        '[]',
        '{"a":',
        `{"${'k'.repeat(71)}":1}`,
        '{"n":-1e999}',
        '{"\\u0000":0}',
      ]) {
        for (const path of [RW, '/organizations/attributes']) {
          const r = await call('PATCH', path, { raw, headers: { 'content-type': 'application/json' } });
          await expectStatus(r, 400);
        }
      }
    });
  });

  describe(`attribute buckets on ${label}: the organization guard`, () => {
    const routes: Array<[string, string, CallOptions]> = [
      ['PUT', RW, { body: { a: 1 } }],
      ['PATCH', RW, { body: { a: 1 } }],
      ['GET', RW, {}],
      ['DELETE', RW, {}],
      ['PUT', '/organizations/attributes', { body: { end_user_read_write: { a: 1 } } }],
      ['PATCH', '/organizations/attributes', { body: { end_user_read_write: { a: 1 } } }],
      ['GET', '/organizations/attributes', {}],
      ['GET', '/organizations/attribute-buckets', {}],
      ['POST', '/organizations/attribute-buckets', { body: { name: 'guarded' } }],
      ['DELETE', '/organizations/attribute-buckets/guarded', {}],
    ];

    it.each(routes)(
      'answers 401 to %s %s without an API key or with a bad one',
      async (method, path, opts) => {
        await expectStatus(await call(method, path, { ...opts, key: null }), 401);
        const r = await call(method, path, { ...opts, key: `isk_${'0'.repeat(32)}${'A'.repeat(43)}` });
        await expectStatus(r, 401);
        expect(r.json.errors[0].message).toContain('not a valid API key');
      },
    );

    it.each(routes)('answers 403 to %s %s with a key of another organization', async (method, path, opts) => {
      const t = service();
      await t.call('PUT', RW, { body: { untouched: true } });
      const other = await t.service.ctx.orgs.create('Intruder');
      const r = await call(method, path, { ...opts, key: other.apiKey });
      await expectStatus(r, 403);
      expect(r.text).not.toContain('untouched');
      expect((await t.call('GET', RW)).json.result).toEqual({ untouched: true });
    });
  });
}
