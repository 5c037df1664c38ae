import { afterEach, beforeEach, describe, expect, it } from 'bun:test';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { jwksRenderer } from '../../core/http/jwks-response.ts';
import type { Signer } from '../../core/ports/signer.ts';
import type { Storage } from '../../core/ports/storage.ts';

export interface SignerHarness {
  signer: Signer;
  storage: Storage;
  /** Moves the signer's clock forward. */
  advance(ms: number): void;
  /** Another signer on the same storage: a second replica. */
  another(): Signer;
  cleanup(): Promise<void>;
}

const org = () => crypto.randomUUID();

/** The Signer contract: ES256 per organization, a JWKS with kid, rotation with a grace period. */
export function signerContract(name: string, makeHarness: () => Promise<SignerHarness>, graceMs: number) {
  describe(`Signer contract: ${name}`, () => {
    let h: SignerHarness;
    beforeEach(async () => {
      h = await makeHarness();
    });
    afterEach(async () => {
      await h.cleanup();
    });

    it('signs ES256 with a kid that the published JWKS verifies', async () => {
      const o = org();
      const jwt = await h.signer.sign(o, { sub: 'x', aud: o });
      const header = decodeProtectedHeader(jwt);
      expect(header.alg).toBe('ES256');
      const jwks = await h.signer.jwks(o);
      expect(jwks.keys.map((k) => k.kid)).toContain(header.kid!);
      const { payload } = await jwtVerify(jwt, createLocalJWKSet(jwks), { algorithms: ['ES256'] });
      expect(payload.sub).toBe('x');
      expect((await h.signer.verify(o, jwt)).sub).toBe('x');
    });

    it('signs off the event loop thread when asked, with the same key and typ', async () => {
      const o = org();
      const jwt = await h.signer.sign(o, { sub: 'off', aud: o }, { typ: 'at+jwt', offThread: true });
      const plain = await h.signer.sign(o, { sub: 'on', aud: o });
      const header = decodeProtectedHeader(jwt);
      expect(header).toMatchObject({ alg: 'ES256', typ: 'at+jwt', kid: decodeProtectedHeader(plain).kid });
      const { payload } = await jwtVerify(jwt, createLocalJWKSet(await h.signer.jwks(o)), {
        algorithms: ['ES256'],
      });
      expect(payload.sub).toBe('off');
    });

    it('serves byte-identical key sets and ETags from the replica that made the key and one that loaded it', async () => {
      const o = org();
      const made = await h.signer.jwks(o);
      const loaded = await h.another().jwks(o);
      const [a, b] = [await jwksRenderer()(made), await jwksRenderer()(loaded)];
      expect(JSON.stringify(loaded)).toBe(JSON.stringify(made));
      expect(b.body).toBe(a.body);
      expect(b.etag).toBe(a.etag);
      expect(Object.keys(JSON.parse(a.body).keys[0])).toEqual([
        'kty',
        'crv',
        'alg',
        'use',
        'key_ops',
        'kid',
        'x',
        'y',
      ]);
    });

    it('publishes keys with exactly the fields of the spec', async () => {
      const { keys } = await h.signer.jwks(org());
      expect(keys).toHaveLength(1);
      expect(Object.keys(keys[0]!).sort()).toEqual(['alg', 'crv', 'key_ops', 'kid', 'kty', 'use', 'x', 'y']);
      expect(keys[0]).toMatchObject({
        alg: 'ES256',
        crv: 'P-256',
        key_ops: ['verify'],
        kty: 'EC',
        use: 'sig',
      });
    });

    it('keeps organizations apart: a token of one does not verify for another', async () => {
      const a = org();
      const b = org();
      const jwt = await h.signer.sign(a, { sub: 'x' });
      await expect(h.signer.verify(b, jwt)).rejects.toThrow();
      expect((await h.signer.jwks(a)).keys[0]!.kid).not.toBe((await h.signer.jwks(b)).keys[0]!.kid);
    });

    it('makes one key when many first uses race, across replicas', async () => {
      const o = org();
      const other = h.another();
      await Promise.all([
        ...Array.from({ length: 10 }, () => h.signer.sign(o, {})),
        ...Array.from({ length: 10 }, () => other.sign(o, {})),
      ]);
      expect((await h.signer.jwks(o)).keys).toHaveLength(1);
      expect((await other.jwks(o)).keys).toHaveLength(1);
    });

    it('rotates: new tokens use the new key, old tokens verify through the grace period, then not', async () => {
      const o = org();
      const old = await h.signer.sign(o, { sub: 'old', exp: Math.floor(Date.now() / 1000) + 10 * graceMs });
      const oldKid = decodeProtectedHeader(old).kid;
      const { kid } = await h.signer.rotate(o);
      expect(kid).not.toBe(oldKid);
      const fresh = await h.signer.sign(o, { sub: 'new' });
      expect(decodeProtectedHeader(fresh).kid).toBe(kid);
      expect((await h.signer.jwks(o)).keys.map((k) => k.kid)).toEqual([kid, oldKid!]);
      expect((await h.signer.verify(o, old)).sub).toBe('old');
      h.advance(graceMs + 1000);
      await h.signer.rotate(o);
      const after = (await h.signer.jwks(o)).keys.map((k) => k.kid);
      expect(after).not.toContain(oldKid!);
      expect(after).toContain(kid);
    });

    it('never stores a private key in the clear', async () => {
      const o = org();
      await h.signer.sign(o, {});
      const rows = await h.storage.query<{ private_sealed: string; public_jwk: unknown }>(
        (await import('drizzle-orm'))
          .sql`select private_sealed, public_jwk from signing_keys where org_id = ${o}`,
      );
      expect(rows).toHaveLength(1);
      expect(rows[0]!.private_sealed.startsWith('sb1.')).toBe(true);
      expect(rows[0]!.private_sealed).not.toContain('"d"');
      expect(JSON.stringify(rows[0]!.public_jwk)).not.toContain('"d"');
    });
  });
}
