/** Numbers, deep values and keys as exact strings, part of the attribute buckets' behaviour suite (attributes.behaviour.ts). */
import { describe, expect, it } from 'bun:test';
import { attributeStore } from '../../plugins/attributes/index.ts';
import { expectStatus } from '../helpers/expect-status.ts';
import type { CallOptions, TestService } from '../helpers/service.ts';

const RW = '/organizations/attributes/end_user_read_write';
const JSON_TYPE = { 'content-type': 'application/json' };
/** A value nesting `levels` arrays, the innermost empty. */
const nested = (levels: number): unknown => {
  let x: unknown = [];
  for (let i = 1; i < levels; i++) x = [x];
  return x;
};

export function attributesValues(label: string, service: () => TestService) {
  const call = (method: string, path: string, opts?: CallOptions) => service().call(method, path, opts);
  const store = () => service().service.ctx.capability(attributeStore)!;

  describe(`attribute buckets on ${label}: numbers`, () => {
    it('stores numbers as doubles: big integers round, -0 reads as 0, 1e-400 as 0, as any JSON parser does', async () => {
      const raw =
        '{"big":12345678901234567891,"past53":9007199254740993,"max53":9007199254740991,"neg":-0,"tiny":1e-400,"exp":1e21}';
      await expectStatus(await call('PUT', RW, { raw, headers: JSON_TYPE }), 204);
      const got = await call('GET', RW);
      for (const part of [
        '"big":12345678901234567000',
        '"past53":9007199254740992',
        '"max53":9007199254740991',
        '"neg":0',
        '"tiny":0',
        '"exp":1e+21',
      ])
        expect(got.text).toContain(part);
      expect(Object.is(got.json.result.neg, 0)).toBe(true);
    });

    it.each(['1e400', '-1e999', '[1, {"x": 2e308}]'])(
      'refuses %s, a number beyond a double, with 400 naming the key, and writes nothing',
      async (value) => {
        await call('PUT', RW, { body: { before: 1 } });
        for (const path of [RW, '/organizations/attributes']) {
          const body = `{"n":${value}}`;
          const raw = path === RW ? body : `{"end_user_read_write":${body}}`;
          const r = await call('PATCH', path, { raw, headers: JSON_TYPE });
          await expectStatus(r, 400);
          expect(r.json.errors[0].message).toContain(
            'attribute "n" holds a number beyond the range of a double (such as 1e400',
          );
        }
        expect((await call('GET', RW)).json.result).toEqual({ before: 1 });
      },
    );
  });

  describe(`attribute buckets on ${label}: deep values`, () => {
    it('accepts a value nesting 64 levels, the limit docs/guides/attribute-buckets.md gives, in either form of PUT', async () => {
      const body = { deep: nested(64) };
      await expectStatus(await call('PUT', RW, { body }), 204);
      expect((await call('GET', RW)).json.result).toEqual(body);
      const many = { end_user_read_write: { deeper: nested(64) } };
      await expectStatus(await call('PUT', '/organizations/attributes', { body: many }), 204);
      expect((await call('GET', RW)).json.result).toEqual(many.end_user_read_write);
    });

    it('refuses a value of 65 levels with 400 naming the attribute, in either form, and writes nothing', async () => {
      await call('PUT', RW, { body: { before: 1 } });
      const one = await call('PUT', RW, { body: { d: nested(65) } });
      await expectStatus(one, 400);
      expect(one.json.errors[0].message).toBe(
        'body: attribute "d" nests arrays and objects deeper than 64 levels',
      );
      const many = await call('PUT', '/organizations/attributes', {
        body: { end_user_read_write: { d: nested(65) } },
      });
      await expectStatus(many, 400);
      expect(many.json.errors[0].message).toBe(
        'body.end_user_read_write: attribute "d" nests arrays and objects deeper than 64 levels',
      );
      expect((await call('GET', RW)).json.result).toEqual({ before: 1 });
    });

    it('refuses a very deep value with 400 saying how deep bodies may nest, not that a number is out of range', async () => {
      await call('PUT', RW, { body: { before: 1 } });
      const raw = `{"d":${'['.repeat(200_000)}${']'.repeat(200_000)}}`;
      const r = await call('PUT', RW, { raw, headers: JSON_TYPE });
      await expectStatus(r, 400);
      // The HTTP layer's whole-body bound refuses it before the plugin walks it.
      expect(r.json.errors[0].message).toContain('request body nests arrays and objects deeper than');
      expect(r.json.errors[0].message).not.toContain('1e400');
      expect((await call('GET', RW)).json.result).toEqual({ before: 1 });
    });

    it('checks what the deployment writes too: 64 levels pass, 65 are a 400 naming the key', async () => {
      const orgId = service().org.id;
      await store().write(orgId, 'end_user_read_write', { ok: nested(64) });
      expect(await store().read(orgId, 'end_user_read_write')).toEqual({ ok: nested(64) });
      for (const levels of [65, 100_000])
        await expect(store().write(orgId, 'end_user_read_write', { deep: nested(levels) })).rejects.toThrow(
          'attributes: attribute "deep" nests arrays and objects deeper than 64 levels',
        );
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      await expect(store().write(orgId, 'end_user_read_write', { cyclic })).rejects.toThrow(
        'deeper than 64 levels',
      );
      expect(await store().read(orgId, 'end_user_read_write')).toEqual({ ok: nested(64) });
    });

    it('refuses from the deployment a value JSON cannot hold, naming the key, rather than losing it', async () => {
      const orgId = service().org.id;
      for (const [value, what] of [
        [undefined, 'holds undefined'],
        [10n, 'holds a bigint'],
        [{ f: () => 1 }, 'holds a function'],
        [[1, Number.NaN], 'holds NaN, which is not a JSON number'],
      ] as const)
        await expect(store().write(orgId, 'end_user_read_write', { v: value })).rejects.toThrow(
          `attributes: attribute "v" ${what}`,
        );
    });
  });

  describe(`attribute buckets on ${label}: keys`, () => {
    it('compares keys as exact strings: no Unicode normalisation (NFC and NFD é are two keys), no case folding', async () => {
      const nfc = '\u00e9t\u00e9';
      const nfd = 'e\u0301te\u0301';
      expect(nfc.normalize('NFD')).toBe(nfd);
      await call('PUT', RW, { body: { [nfc]: 'nfc', [nfd]: 'nfd', Key: 'upper', key: 'lower' } });
      expect((await call('GET', RW)).json.result).toEqual({
        [nfc]: 'nfc',
        [nfd]: 'nfd',
        Key: 'upper',
        key: 'lower',
      });
      expect((await call('GET', `${RW}?attributes=${encodeURIComponent(nfc)}`)).json.result).toEqual({
        [nfc]: 'nfc',
      });
      await expectStatus(await call('DELETE', `${RW}?attributes=${encodeURIComponent(nfd)},key`), 204);
      expect((await call('GET', RW)).json.result).toEqual({ [nfc]: 'nfc', Key: 'upper' });
    });
  });
}
