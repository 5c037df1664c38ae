import { Elysia } from 'elysia';
import type { PersonDirectory } from '../../../core/capabilities/person-directory.ts';
import { consistentWrite } from '../../../core/http/consistency.ts';
import { ErrorEnvelopeSchema, errorResponses, ok, writeErrorResponses } from '../../../core/http/envelope.ts';
import { consistencyHeaders, routeDetail } from '../../../core/http/openapi-docs.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import type { Registration } from '../ceremony/registration.ts';
import { PasskeyErrors } from '../errors.ts';
import { CreationOptionsResult, PersonParams, RegisterBody, RegisteredResult } from '../schema.ts';

const detail = routeDetail(['Passkeys']);

/**
 * Passkey registration for a person, by the organization (API key): its application shows the
 * options to the person's browser (`navigator.credentials.create`) and sends the answer back.
 */
export function registrationRoutes(
  ctx: ServiceContext,
  deps: { directory: PersonDirectory; registration: Registration },
) {
  const { directory, registration } = deps;
  const personOf = async (orgId: string, personId: string) => {
    const person = await directory.get(orgId, personId);
    if (!person) throw PasskeyErrors.PERSON_NOT_FOUND(personId);
    return person;
  };

  return new Elysia()
    .use(ctx.auth)
    .post(
      '/persons/:person_id/credentials/webauthn/registration-options',
      async ({ org, params, request }) => {
        const person = await personOf(org.id, params.person_id);
        return ok(await consistentWrite(request, ctx.headers, () => registration.options(person)));
      },
      {
        apiKey: true,
        params: PersonParams,
        headers: consistencyHeaders(ctx.headers),
        response: { 200: CreationOptionsResult, ...errorResponses, ...writeErrorResponses },
        detail: detail(
          'PostPersonWebauthnRegistrationOptions',
          'Options to register a passkey for a person',
          "A `challenge_id` and WebAuthn `PublicKeyCredentialCreationOptionsJSON` for `navigator.credentials.create` (`PublicKeyCredential.parseCreationOptionsFromJSON`): a discoverable credential (resident key required), user verification preferred, no attestation, the person's passkeys excluded. The relying party is the organization's policy's `webauthn` (the PUBLIC_BASE_URL host without one). The challenge is answered once, within PASSKEY_CHALLENGE_SECONDS, for this person only.",
        ),
      },
    )
    .post(
      '/persons/:person_id/credentials/webauthn',
      async ({ org, params, body, request, set }) => {
        const person = await personOf(org.id, params.person_id);
        const added = await consistentWrite(request, ctx.headers, () => registration.register(person, body));
        set.status = 201;
        return ok({
          credential_id: added.credentialId,
          type: 'webauthn' as const,
          name: added.name,
          created_at: new Date(added.createdAt).toISOString(),
        });
      },
      {
        apiKey: true,
        params: PersonParams,
        body: RegisterBody,
        parse: 'json',
        headers: consistencyHeaders(ctx.headers),
        response: {
          201: RegisteredResult,
          ...errorResponses,
          409: ErrorEnvelopeSchema,
          ...writeErrorResponses,
        },
        detail: detail(
          'PostPersonWebauthnCredential',
          'Register a passkey for a person',
          "`challenge_id` from the options and `response`, the browser's `RegistrationResponseJSON` (`credential.toJSON()`); `name` (1 to 64 characters, `Passkey` unless given) tells the person's passkeys apart in GET /persons/{id}/credentials. 400 naming the rule when the challenge is unknown, used, expired or another person's, or the response's origin, RP ID or challenge is not the expected one; 409 when the authenticator's credential is registered already in this organization.",
        ),
      },
    );
}
