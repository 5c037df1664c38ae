import { base64url, fromBase64url, sha256 } from '../../core/ids.ts';
import type { SecretBox } from '../../core/ports/secret-box.ts';
import { SecretBoxError } from '../../core/ports/secret-box.ts';

/** A master key: 32 bytes and the id written into every value it seals. */
export interface MasterKey {
  id: string;
  key: Uint8Array;
}

const PREFIX = 'sb1';
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Parses MASTER_KEY entries (`[kid:]base64`, current first). An entry without a kid gets one from its digest. */
export async function parseMasterKeys(entries: readonly string[]): Promise<MasterKey[]> {
  const keys: MasterKey[] = [];
  for (const entry of entries) {
    const colon = entry.indexOf(':');
    const b64 = colon >= 0 ? entry.slice(colon + 1) : entry;
    const key = fromBase64url(b64.replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, ''));
    if (key.length !== 32) throw new Error('a master key must be 32 bytes');
    const id = colon >= 0 ? entry.slice(0, colon) : base64url(await sha256(b64)).slice(0, 8);
    keys.push({ id, key });
  }
  return keys;
}

/**
 * AES-256-GCM with a random 96-bit nonce per value. Format: `sb1.<kid>.<base64url(nonce|ciphertext|tag)>`.
 * The context is the additional authenticated data: a value opens only where it was sealed.
 */
export async function createAesGcmSecretBox(masterKeys: readonly MasterKey[]): Promise<SecretBox> {
  if (masterKeys.length === 0) throw new Error('at least one master key is needed');
  const keys = new Map<string, CryptoKey>();
  for (const mk of masterKeys) {
    if (keys.has(mk.id)) throw new Error(`master key id ${mk.id} is used twice`);
    keys.set(
      mk.id,
      await crypto.subtle.importKey('raw', new Uint8Array(mk.key), 'AES-GCM', false, ['encrypt', 'decrypt']),
    );
  }
  const current = masterKeys[0]!.id;
  const currentKey = keys.get(current)!;
  const kidOf = (sealed: string) => sealed.split('.')[1];
  return {
    currentKeyId: current,
    async seal(plaintext, context) {
      const iv = crypto.getRandomValues(new Uint8Array(12));
      const ct = new Uint8Array(
        await crypto.subtle.encrypt(
          { name: 'AES-GCM', iv, additionalData: encoder.encode(context) },
          currentKey,
          encoder.encode(plaintext),
        ),
      );
      const out = new Uint8Array(iv.length + ct.length);
      out.set(iv);
      out.set(ct, iv.length);
      return `${PREFIX}.${current}.${base64url(out)}`;
    },
    async open(sealed, context) {
      const parts = sealed.split('.');
      if (parts.length !== 3 || parts[0] !== PREFIX)
        throw new SecretBoxError('MALFORMED', 'not a sealed value');
      const key = keys.get(parts[1]!);
      if (!key)
        throw new SecretBoxError(
          'UNKNOWN_KEY',
          `sealed with master key ${parts[1]}, which is not configured in MASTER_KEY`,
        );
      const raw = fromBase64url(parts[2]!);
      if (raw.length < 12 + 16) throw new SecretBoxError('MALFORMED', 'sealed value is too short');
      try {
        const pt = await crypto.subtle.decrypt(
          { name: 'AES-GCM', iv: raw.subarray(0, 12), additionalData: encoder.encode(context) },
          key,
          raw.subarray(12),
        );
        return decoder.decode(pt);
      } catch {
        throw new SecretBoxError(
          'TAMPERED',
          'sealed value does not open: altered, or sealed for another place',
        );
      }
    },
    isStale: (sealed) => kidOf(sealed) !== current,
  };
}
