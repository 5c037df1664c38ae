import * as v from 'valibot';
import { exactObject } from '../../../core/http/validation.ts';
import { isUuid } from '../../../core/ids.ts';
import { TotpErrors } from '../errors.ts';

/** A UUID from the path: 400 naming the parameter when it cannot be one (so no query runs with it). */
export function pathId(name: 'person_id' | 'credential_id', value: string): string {
  if (!isUuid(value))
    throw TotpErrors.INVALID_TOTP_INPUT(
      `params.${name}: must be a UUID (got ${JSON.stringify(value.slice(0, 64))})`,
    );
  return value.toLowerCase();
}

export const PersonParams = v.object({ person_id: v.string() });
export const CredentialParams = v.object({ person_id: v.string(), credential_id: v.string() });

/** POST /persons/{id}/credentials/totp: the body may be left out. */
export const EnrolBody = v.nullish(
  exactObject(
    {
      name: v.optional(
        v.pipe(
          v.string('must be a string'),
          v.minLength(1, 'must not be empty'),
          v.maxLength(64, 'must be at most 64 characters'),
          v.description('A name for the authenticator, shown in the credentials list ("Phone").'),
        ),
      ),
    },
    'member',
  ),
);

export const ConfirmBody = exactObject(
  {
    code: v.pipe(
      v.string('must be a string'),
      v.regex(/^\d{6}$/, 'must be the six-digit code the authenticator app shows'),
      v.description('The code the app shows now for the enrolled secret.'),
    ),
  },
  'member',
);

export const EnrolmentResult = v.object({
  credential_id: v.string(),
  secret: v.pipe(v.string(), v.description('The shared secret in base32, for typing into an app by hand.')),
  otpauth_uri: v.pipe(v.string(), v.description('The otpauth://totp/ URI an app scans.')),
  qr_svg: v.pipe(v.string(), v.description('The URI as a QR code: an SVG document.')),
  expires_at: v.pipe(v.string(), v.description('RFC 3339: the enrolment lapses unless confirmed by then.')),
});

export const RecoveryCodesResult = v.object({
  recovery_codes: v.pipe(
    v.array(v.string()),
    v.description('Ten single-use codes, each accepted once in place of a code; shown only now.'),
  ),
});
