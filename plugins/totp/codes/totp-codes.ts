import { Secret, TOTP } from 'otpauth';
import QRCode from 'qrcode';

/** What every authenticator app reads: RFC 6238's defaults. */
export const TOTP_PARAMETERS = { algorithm: 'SHA1', digits: 6, period: 30 } as const;

/** A code as typed: six digits. */
export const TOTP_CODE = /^\d{6}$/;

/** A new secret: 20 random bytes (160 bits, RFC 4226's length), in base32 as the apps take it. */
export const newSecret = (): string => new Secret({ size: 20 }).base32;

/**
 * The `otpauth://totp/...` URI an app scans: `Issuer:account`, the secret and the parameters (the
 * issuer and account are percent-encoded, so a colon in either does not split the label).
 */
export function otpauthUri(o: { secret: string; issuer: string; account: string }): string {
  return new TOTP({
    issuer: o.issuer,
    label: o.account,
    secret: Secret.fromBase32(o.secret),
    ...TOTP_PARAMETERS,
  }).toString();
}

/** The URI as a QR code, an SVG document a page can show as it is. */
export const qrSvg = (uri: string): Promise<string> =>
  QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });

/**
 * The time step (30-second periods since the epoch) whose code `code` is, looking one step either side
 * of `now` for a clock that drifts, or undefined when it is none of them.
 */
export function stepOf(secret: string, code: string, now: number): number | undefined {
  if (!TOTP_CODE.test(code)) return undefined;
  const delta = TOTP.validate({
    token: code,
    secret: Secret.fromBase32(secret),
    ...TOTP_PARAMETERS,
    timestamp: now,
    window: 1,
  });
  return delta === null
    ? undefined
    : TOTP.counter({ period: TOTP_PARAMETERS.period, timestamp: now }) + delta;
}
