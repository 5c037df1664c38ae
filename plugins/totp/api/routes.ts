import { Elysia } from 'elysia';
import { consistentWrite } from '../../../core/http/consistency.ts';
import {
  ErrorEnvelopeSchema,
  errorResponses,
  ok,
  resultOf,
  writeErrorResponses,
} from '../../../core/http/envelope.ts';
import { optionalJson, refuseArrayBody } from '../../../core/http/object-body.ts';
import { consistencyHeaders, routeDetail } from '../../../core/http/openapi-docs.ts';
import { requestContextReader } from '../../../core/http/sign-in-context.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import type { TotpEnrolment } from './enrolment.ts';
import {
  ConfirmBody,
  CredentialParams,
  EnrolBody,
  EnrolmentResult,
  PersonParams,
  pathId,
  RecoveryCodesResult,
} from './input.ts';

const BASE = '/persons/:person_id/credentials/totp';

/**
 * POST /persons/{id}/credentials/totp (enrol), .../{credential_id}/confirm and
 * .../{credential_id}/recovery-codes: the organization's back end, with its API key.
 */
export function totpRoutes(ctx: ServiceContext, enrolment: TotpEnrolment) {
  const headers = consistencyHeaders(ctx.headers);
  const detail = routeDetail(['Authentication factors']);
  const readContext = requestContextReader(ctx.headers);
  // Secrets and recovery codes are answered once: no cache keeps them.
  const noStore = (set: { headers: Record<string, string | number> }) => {
    set.headers['cache-control'] = 'no-store';
  };
  return new Elysia()
    .use(ctx.auth)
    .post(
      BASE,
      async ({ org, params, body, request, set }) => {
        const personId = pathId('person_id', params.person_id);
        const made = await consistentWrite(request, ctx.headers, () =>
          enrolment.enrol(org.id, personId, body?.name),
        );
        set.status = 201;
        noStore(set);
        return ok(made);
      },
      {
        apiKey: true,
        params: PersonParams,
        parse: optionalJson,
        transform: refuseArrayBody,
        body: EnrolBody,
        headers,
        response: {
          201: resultOf(EnrolmentResult),
          ...errorResponses,
          409: ErrorEnvelopeSchema,
          ...writeErrorResponses,
        },
        detail: detail(
          'PostPersonsPersonIdCredentialsTotp',
          'Start a TOTP enrolment',
          "A new authenticator secret for the person, shown once: `secret` (base32), `otpauth_uri` (the account named by the person's first handle, the issuer by the organization's name; SHA-1, 6 digits, 30 seconds) and `qr_svg`, its QR code. It counts as a second factor only once confirmed with a code of the app (POST .../{credential_id}/confirm) before `expires_at` (TOTP_ENROLMENT_MINUTES); a new enrolment replaces an unconfirmed one. Optional body `{name}`. 404 for a person this organization does not have, 409 for a person without a handle.",
        ),
      },
    )
    .post(
      `${BASE}/:credential_id/confirm`,
      async ({ org, params, body, request, set }) => {
        const personId = pathId('person_id', params.person_id);
        const id = pathId('credential_id', params.credential_id);
        const { clientIp } = readContext(request);
        noStore(set);
        return ok(
          await consistentWrite(request, ctx.headers, () =>
            enrolment.confirm(org.id, personId, id, body.code, clientIp),
          ),
        );
      },
      {
        apiKey: true,
        params: CredentialParams,
        parse: 'json',
        transform: refuseArrayBody,
        body: ConfirmBody,
        headers,
        response: {
          200: resultOf(RecoveryCodesResult),
          ...errorResponses,
          409: ErrorEnvelopeSchema,
          429: ErrorEnvelopeSchema,
          ...writeErrorResponses,
        },
        detail: detail(
          'PostPersonsPersonIdCredentialsTotpCredentialIdConfirm',
          'Confirm a TOTP enrolment with a code',
          "`code`: the six-digit code the app shows (one 30-second step of drift either way). The authenticator then counts as the person's second factor, replacing the one it had, and the answer holds its ten recovery codes, shown once and stored hashed. 400 naming `body.code` for a code that is not the app's now; 404 for an unknown or lapsed enrolment; 409 when confirmed already; 429 with Retry-After past the attempts allowed per person and per address.",
        ),
      },
    )
    .post(
      `${BASE}/:credential_id/recovery-codes`,
      async ({ org, params, request, set }) => {
        const personId = pathId('person_id', params.person_id);
        const id = pathId('credential_id', params.credential_id);
        noStore(set);
        return ok(
          await consistentWrite(request, ctx.headers, () =>
            enrolment.renewRecoveryCodes(org.id, personId, id),
          ),
        );
      },
      {
        apiKey: true,
        params: CredentialParams,
        headers,
        response: {
          200: resultOf(RecoveryCodesResult),
          ...errorResponses,
          409: ErrorEnvelopeSchema,
          ...writeErrorResponses,
        },
        detail: detail(
          'PostPersonsPersonIdCredentialsTotpCredentialIdRecoveryCodes',
          'Renew the recovery codes of a TOTP authenticator',
          'Ten new single-use recovery codes, shown once; the earlier ones stop working. 404 for an unknown authenticator, 409 for one not confirmed yet.',
        ),
      },
    );
}
