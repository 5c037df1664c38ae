import { describe, expect, it } from 'bun:test';
import { createAesGcmSecretBox, parseMasterKeys } from '../../adapters/local-keys/secret-box.ts';
import type { SecretBox } from '../../core/ports/secret-box.ts';

const key = () => btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));

/** The SecretBox contract, run for each adapter (AES-256-GCM with local master keys today). */
function secretBoxContract(name: string, make: (entries: string[]) => Promise<SecretBox>) {
  describe(`SecretBox contract: ${name}`, () => {
    it('opens what it sealed, and the sealed form holds no plaintext', async () => {
      const box = await make([key()]);
      const sealed = await box.seal('the secret value', 'ctx:1');
      expect(sealed).not.toContain('secret');
      expect(await box.open(sealed, 'ctx:1')).toBe('the secret value');
    });

    it('seals the same plaintext differently each time, with a nonce never used twice', async () => {
      const box = await make([key()]);
      expect(await box.seal('x', 'c')).not.toBe(await box.seal('x', 'c'));
      // Past several refills of a nonce pool (4 KiB holds 341 nonces of 12 bytes).
      const sealed = await Promise.all(Array.from({ length: 2000 }, () => box.seal('x', 'c')));
      const nonces = sealed.map((v) =>
        Buffer.from(v.split('.')[2]!, 'base64url').subarray(0, 12).toString('hex'),
      );
      expect(new Set(nonces).size).toBe(2000);
      for (const v of sealed.slice(-3)) expect(await box.open(v, 'c')).toBe('x');
    });

    it('refuses to open a value in another context', async () => {
      const box = await make([key()]);
      const sealed = await box.seal('v', 'webhook:a:custom_headers');
      await expect(box.open(sealed, 'webhook:b:custom_headers')).rejects.toMatchObject({ code: 'TAMPERED' });
    });

    it('detects a tampered value', async () => {
      const box = await make([key()]);
      const sealed = await box.seal('value', 'c');
      const last = sealed.at(-2) === 'A' ? 'B' : 'A';
      await expect(box.open(`${sealed.slice(0, -2)}${last}${sealed.at(-1)}`, 'c')).rejects.toMatchObject({
        code: 'TAMPERED',
      });
      await expect(box.open('garbage', 'c')).rejects.toMatchObject({ code: 'MALFORMED' });
    });

    it('opens values sealed under a previous master key after rotation, and says they are stale', async () => {
      const oldKey = `k1:${key()}`;
      const before = await make([oldKey]);
      const sealed = await before.seal('kept across rotation', 'c');
      const after = await make([`k2:${key()}`, oldKey]);
      expect(after.currentKeyId).toBe('k2');
      expect(await after.open(sealed, 'c')).toBe('kept across rotation');
      expect(after.isStale(sealed)).toBe(true);
      expect(after.isStale(await after.seal('new', 'c'))).toBe(false);
    });

    it('seals and opens at once where it can, interchangeably with seal and open', async () => {
      const box = await make([key()]);
      if (!box.sealNow || !box.openNow) return; // optional members: a remote box has neither
      const now = box.sealNow('at once', 'c');
      expect(now).not.toBe(box.sealNow('at once', 'c'));
      expect(await box.open(now, 'c')).toBe('at once');
      expect(box.openNow(await box.seal('later', 'c'), 'c')).toBe('later');
      expect(() => box.openNow!(now, 'elsewhere')).toThrow(expect.objectContaining({ code: 'TAMPERED' }));
      expect(() => box.openNow!('garbage', 'c')).toThrow(expect.objectContaining({ code: 'MALFORMED' }));
    });

    it('names a missing master key', async () => {
      const sealed = await (await make([`gone:${key()}`])).seal('v', 'c');
      await expect((await make([`k9:${key()}`])).open(sealed, 'c')).rejects.toThrow(/master key gone/);
    });
  });
}

secretBoxContract('AES-256-GCM', async (entries) => createAesGcmSecretBox(await parseMasterKeys(entries)));
