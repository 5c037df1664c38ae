/**
 * RFC 6238 TOTP codes for the benchmarks, with node:crypto's HMAC-SHA-1 and RFC 4648 base32 (not the
 * otpauth package the service uses): a code the service accepts is one an authenticator app shows.
 */
import { createHmac } from 'node:crypto';

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

function base32Decode(text: string): Buffer {
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const c of text.replace(/=+$/, '').toUpperCase()) {
    const index = BASE32.indexOf(c);
    if (index < 0) throw new Error(`not base32: ${c}`);
    value = ((value << 5) | index) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** The 30-second step of a time in milliseconds. */
export const stepOf = (ms: number): number => Math.floor(ms / 30_000);

/** The six-digit code of `step` for a base32 secret (RFC 4226 dynamic truncation). */
export function totpCode(secretBase32: string, step: number): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(step));
  const mac = createHmac('sha1', base32Decode(secretBase32)).update(message).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}
