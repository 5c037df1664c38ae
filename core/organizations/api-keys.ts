import { base64url, constantTimeEqual, sha256, toHex } from '../ids.ts';

/**
 * API key format: `isk_` + the key's id (32 hex digits) + 256 random bits (base64url). The id finds
 * the row; the secret's SHA-256 is compared in constant time, so lookup time says nothing about it.
 */
const PREFIX = 'isk_';
const ID_HEX = 32;

export interface ParsedApiKey {
  keyId: string;
  secret: string;
}

export function newApiKey(keyId: string): { apiKey: string; secret: string } {
  const secret = base64url(crypto.getRandomValues(new Uint8Array(32)));
  return { apiKey: `${PREFIX}${keyId.replaceAll('-', '')}${secret}`, secret };
}

export function parseApiKey(apiKey: string): ParsedApiKey | null {
  if (!apiKey.startsWith(PREFIX) || apiKey.length !== PREFIX.length + ID_HEX + 43) return null;
  const hex = apiKey.slice(PREFIX.length, PREFIX.length + ID_HEX);
  const secret = apiKey.slice(PREFIX.length + ID_HEX);
  if (!/^[0-9a-f]{32}$/.test(hex) || !/^[A-Za-z0-9_-]{43}$/.test(secret)) return null;
  const keyId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return { keyId, secret };
}

export const digestOf = async (secret: string): Promise<string> => toHex(await sha256(secret));

export function digestsMatch(storedHex: string, computedHex: string): boolean {
  return constantTimeEqual(fromHex(storedHex), fromHex(computedHex));
}

const fromHex = (hex: string) => Uint8Array.from(hex.match(/../g) ?? [], (b) => Number.parseInt(b, 16));
