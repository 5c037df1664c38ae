import { describe, expect, it, spyOn } from 'bun:test';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { createAesGcmSecretBox, parseMasterKeys } from '../../adapters/local-keys/secret-box.ts';
import { createLocalKeysSigner } from '../../adapters/local-keys/signer.ts';
import { manualClock } from '../helpers/clock.ts';
import { freshPglite } from '../helpers/pglite.ts';
import { signerContract } from './signer.contract.ts';

const GRACE = 3600_000;

signerContract(
  'local keys on PGlite',
  async () => {
    const storage = await freshPglite();
    const clock = manualClock(Date.now());
    const secrets = await createAesGcmSecretBox(await parseMasterKeys([btoa('k'.repeat(32))]));
    const make = () => createLocalKeysSigner({ storage, secrets, clock, graceMs: GRACE, cacheMs: 0 });
    return { signer: make(), storage, advance: clock.advance, another: make, cleanup: () => storage.close() };
  },
  GRACE,
);

describe('local keys: signNow', () => {
  it('signs at once only while the current key is loaded and fresh, with the key sign uses', async () => {
    const storage = await freshPglite();
    try {
      const clock = manualClock(Date.now());
      const secrets = await createAesGcmSecretBox(await parseMasterKeys([btoa('k'.repeat(32))]));
      const signer = createLocalKeysSigner({ storage, secrets, clock, graceMs: GRACE, cacheMs: 60_000 });
      const o = crypto.randomUUID();
      // Nothing loaded for this organization yet: the caller goes through sign.
      expect(signer.signNow(o, { sub: 'now' })).toBeUndefined();
      await signer.sign(o, { sub: 'first' });
      const jwt = signer.signNow(o, { sub: 'now' }, { typ: 'at+jwt' });
      expect(jwt).toBeString();
      expect(decodeProtectedHeader(jwt!)).toMatchObject({ alg: 'ES256', typ: 'at+jwt' });
      const verified = await jwtVerify(jwt!, createLocalJWKSet(await signer.jwks(o)), {
        algorithms: ['ES256'],
      });
      expect(verified.payload.sub).toBe('now');
      // A rotation here is seen at once; past the cache's time the key must be looked at again.
      const { kid } = await signer.rotate(o);
      expect(decodeProtectedHeader(signer.signNow(o, { sub: 'rotated' })!).kid).toBe(kid);
      clock.advance(60_001);
      expect(signer.signNow(o, { sub: 'stale' })).toBeUndefined();
    } finally {
      await storage.close();
    }
  });
});

describe('local keys: offThread', () => {
  it('signs through WebCrypto when asked, with the current key across a rotation', async () => {
    const storage = await freshPglite();
    const subtleSign = spyOn(crypto.subtle, 'sign');
    try {
      const clock = manualClock(Date.now());
      const secrets = await createAesGcmSecretBox(await parseMasterKeys([btoa('k'.repeat(32))]));
      const signer = createLocalKeysSigner({ storage, secrets, clock, graceMs: GRACE, cacheMs: 60_000 });
      const o = crypto.randomUUID();
      const verify = async (jwt: string) =>
        (await jwtVerify(jwt, createLocalJWKSet(await signer.jwks(o)), { algorithms: ['ES256'] })).payload;
      const first = await signer.sign(o, { sub: 'first' }, { offThread: true });
      expect(subtleSign).toHaveBeenCalledTimes(1);
      expect((await verify(first)).sub).toBe('first');
      // On the thread unless asked.
      await signer.sign(o, { sub: 'here' });
      expect(subtleSign).toHaveBeenCalledTimes(1);
      const { kid } = await signer.rotate(o);
      const rotated = await signer.sign(o, { sub: 'rotated' }, { typ: 'at+jwt', offThread: true });
      expect(subtleSign).toHaveBeenCalledTimes(2);
      expect(decodeProtectedHeader(rotated)).toMatchObject({ alg: 'ES256', typ: 'at+jwt', kid });
      expect(decodeProtectedHeader(first).kid).not.toBe(kid);
      expect((await verify(rotated)).sub).toBe('rotated');
    } finally {
      subtleSign.mockRestore();
      await storage.close();
    }
  });
});
