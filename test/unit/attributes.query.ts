/** Query strings, request bodies on DELETE and paths, part of the attribute buckets' behaviour suite (attributes.behaviour.ts). */
import { describe, expect, it } from 'bun:test';
import { expectStatus } from '../helpers/expect-status.ts';
import type { CallOptions, TestService } from '../helpers/service.ts';

const ALL = '/organizations/attributes';
const RW = `${ALL}/end_user_read_write`;
const JSON_TYPE = { 'content-type': 'application/json' };

export function attributesQuery(label: string, service: () => TestService) {
  const call = (method: string, path: string, opts?: CallOptions) => service().call(method, path, opts);
  const read = async () => (await call('GET', RW)).json.result;
  /** Expects a 400 whose message contains each of `parts`, and the bucket as it was. */
  const refused = async (method: string, path: string, opts: CallOptions, ...parts: string[]) => {
    await call('PUT', RW, { body: { a: 1, b: 2 } });
    const r = await call(method, path, opts);
    expect([method, path, r.status]).toEqual([method, path, 400]);
    for (const part of parts) expect(r.json.errors[0].message).toContain(part);
    expect(await read()).toEqual({ a: 1, b: 2 });
  };

  describe(`attribute buckets on ${label}: DELETE deletes everything only when asked plainly`, () => {
    it.each([
      ['attribute', `${RW}?attribute=a`],
      ['names', `${RW}?names=a`],
      ['force', `${RW}?attributes=a&force=1`],
      ['Attributes', `${RW}?Attributes=a`],
    ])('refuses the unknown query parameter %p, naming it and the accepted one', async (name, path) => {
      await refused('DELETE', path, {}, `unknown query parameter "${name}"`, 'accepted here is "attributes"');
    });

    it('refuses ?attributes= given empty, rather than deleting every attribute', async () => {
      for (const path of [`${RW}?attributes=`, `${RW}?attributes`])
        await refused(
          'DELETE',
          path,
          {},
          'query attributes is empty: name at least one (?attributes=a,b), or leave the parameter out',
        );
    });

    it('refuses a request body, with or without a query, rather than deleting every attribute', async () => {
      for (const [path, raw] of [
        [RW, '{"attributes":["a"]}'],
        [RW, '["a"]'],
        [RW, '{}'],
        [`${RW}?attributes=a`, '{"attributes":["b"]}'],
      ] as const)
        await refused('DELETE', path, { raw, headers: JSON_TYPE }, 'DELETE takes no body');
    });

    it('deletes every attribute with no query and no body (an empty body included)', async () => {
      await call('PUT', RW, { body: { a: 1 } });
      await expectStatus(await call('DELETE', RW, { raw: '', headers: { 'content-length': '0' } }), 204);
      expect(await read()).toEqual({});
      await call('PUT', RW, { body: { a: 1 } });
      await expectStatus(await call('DELETE', RW), 204);
      expect(await read()).toEqual({});
    });
  });

  describe(`attribute buckets on ${label}: the names in the query`, () => {
    it('refuses unknown query parameters on reads too, one bucket or several', async () => {
      await refused('GET', `${RW}?attribute=a`, {}, 'unknown query parameter "attribute"', '"attributes"');
      await refused('GET', `${ALL}?bucket=end_user_read_write`, {}, 'parameter "bucket"', '"buckets"');
      await refused('GET', `${ALL}?buckets=end_user_read_write&attributes=a`, {}, 'parameter "attributes"');
    });

    it('reads and deletes a key holding a comma, sent as %2C, apart from the keys on either side of it', async () => {
      await call('PUT', RW, { body: { 'a,b': 'comma', a: 'a', b: 'b' } });
      expect((await call('GET', `${RW}?attributes=a%2Cb`)).json.result).toEqual({ 'a,b': 'comma' });
      expect((await call('GET', `${RW}?attributes=a,b`)).json.result).toEqual({ a: 'a', b: 'b' });
      expect((await call('GET', `${RW}?attributes=${encodeURIComponent('a,b')},b`)).json.result).toEqual({
        'a,b': 'comma',
        b: 'b',
      });
      await expectStatus(await call('DELETE', `${RW}?attributes=a%2Cb`), 204);
      expect(await read()).toEqual({ a: 'a', b: 'b' });
    });

    it('takes the parameter repeated as well as comma-separated, each value split on its commas', async () => {
      await call('PUT', RW, { body: { 'x,y': 1, z: 2, 'p q': 3, keep: 4 } });
      expect((await call('GET', `${RW}?attributes=x%2Cy&attributes=z,p+q`)).json.result).toEqual({
        'x,y': 1,
        z: 2,
        'p q': 3,
      });
      await expectStatus(await call('DELETE', `${RW}?attributes=z&attributes=x%2Cy`), 204);
      expect(await read()).toEqual({ 'p q': 3, keep: 4 });
      await refused('DELETE', `${RW}?attributes=a&attributes=`, {}, 'must not list an empty name');
    });

    it.each(['%E0%A4%A', '%ZZ', 'a%', '%FF', 'ok,%C3'])(
      'answers 400 naming the parameter for the bad percent-encoding %p, and deletes nothing',
      async (value) => {
        for (const method of ['GET', 'DELETE'])
          await refused(
            method,
            `${RW}?attributes=${value}`,
            {},
            'query attributes is not valid percent-encoding',
            'two hex digits',
          );
      },
    );

    it('answers 400 for a parameter name that does not percent-decode', async () => {
      await refused('DELETE', `${RW}?attr%ZZ=a`, {}, 'a query parameter name is not valid percent-encoding');
    });
  });

  describe(`attribute buckets on ${label}: the path`, () => {
    it.each([
      ['GET', `${ALL}/end%ZZ`],
      ['PUT', `${ALL}/end%ZZ`],
      ['PATCH', `${ALL}/end%E0%A4`],
      ['DELETE', `${ALL}/end%FF`],
      ['DELETE', '/organizations/attribute-buckets/end%ZZ'],
    ])('answers %s %s with 400 naming the bucket name in the path', async (method, path) => {
      const opts = method === 'PUT' || method === 'PATCH' ? { body: { a: 9 } } : {};
      await refused(
        method,
        path,
        opts,
        'params.bucket_name: the bucket name in the path is not valid percent-encoding',
      );
    });

    it('treats a trailing slash as absent, as every route of the service does', async () => {
      await call('PUT', RW, { body: { a: 1 } });
      const slash = await call('GET', `${ALL}/`);
      await expectStatus(slash, 200);
      expect(slash.json).toEqual((await call('GET', ALL)).json);
      await expectStatus(await call('GET', '/organizations/attribute-buckets/'), 200);
      expect((await call('GET', `${RW}/`)).json).toEqual({ result: { a: 1 } });
      await expectStatus(await call('PATCH', `${ALL}/`, { body: { end_user_read_write: { b: 2 } } }), 204);
      expect(await read()).toEqual({ a: 1, b: 2 });
      await expectStatus(await call('PUT', `${RW}/`, { body: { c: 3 } }), 204);
      expect(await read()).toEqual({ c: 3 });
    });

    it('answers DELETE /organizations/attributes/ (no bucket named) with 405 or 404, deleting nothing', async () => {
      await call('PUT', RW, { body: { a: 1 } });
      for (const path of [ALL, `${ALL}/`]) {
        const r = await call('DELETE', path);
        await expectStatus(r, 405);
        expect(r.headers.get('allow')).toBe('GET, HEAD, PATCH, PUT');
      }
      const r = await call('DELETE', `${ALL}//`);
      await expectStatus(r, 404);
      expect(r.json).toEqual({ errors: [{ httpcode: 404, message: `no route for DELETE ${ALL}//` }] });
      expect(await read()).toEqual({ a: 1 });
    });
  });
}
