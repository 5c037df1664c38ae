import { Elysia } from 'elysia';
import { consistentWrite } from '../../../core/http/consistency.ts';
import { ErrorEnvelopeSchema, errorResponses, ok, writeErrorResponses } from '../../../core/http/envelope.ts';
import { consistencyHeaders, routeDetail } from '../../../core/http/openapi-docs.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import {
  MfaOptionsBody,
  RequestOptionsResult,
  SignInBody,
  SignInOptionsBody,
  SignInResult,
} from '../schema.ts';
import type { createSecondFactor } from '../sign-in/second-factor.ts';
import type { PasskeySignIn } from '../sign-in/sign-in.ts';

// End-user facing: `Service-OrgID` only, as the password sign-in.
const detail = routeDetail(['Passkeys'], [{ orgId: [] }]);
const limited = { 429: ErrorEnvelopeSchema };

/** Sign-in with a passkey, and the passkey options of a second step. */
export function signInRoutes(
  ctx: ServiceContext,
  deps: {
    signIn: PasskeySignIn;
    secondFactor: ReturnType<typeof createSecondFactor>;
    readContext: (request: Request) => RequestContext;
  },
) {
  const { signIn, secondFactor, readContext } = deps;
  return new Elysia()
    .use(ctx.auth)
    .post(
      '/authenticate/webauthn/options',
      async ({ org, body, request }) =>
        ok(
          await consistentWrite(request, ctx.headers, () =>
            signIn.options(org.id, body?.handle, readContext(request)),
          ),
        ),
      {
        orgOnly: true,
        body: SignInOptionsBody,
        headers: consistencyHeaders(ctx.headers),
        response: { 200: RequestOptionsResult, ...errorResponses, ...limited, ...writeErrorResponses },
        detail: detail(
          'PostAuthenticateWebauthnOptions',
          'Options to sign in with a passkey',
          "A `challenge_id` and WebAuthn `PublicKeyCredentialRequestOptionsJSON` for `navigator.credentials.get` (`PublicKeyCredential.parseRequestOptionsFromJSON`). No credentials are listed: passkeys are discoverable, so no handle is needed. A `handle`, when sent, binds the challenge to the person it names (only that person's passkey will answer it); the answer is the same whether it names one or not. 403 when the organization's policy does not allow webauthn as a first factor; 429 with Retry-After past the per-address limit.",
        ),
      },
    )
    .post(
      '/authenticate/webauthn',
      async ({ org, body, request }) =>
        ok(
          await consistentWrite(request, ctx.headers, () =>
            signIn.signIn(org.id, body, readContext(request)),
          ),
        ),
      {
        orgOnly: true,
        body: SignInBody,
        parse: 'json',
        headers: consistencyHeaders(ctx.headers),
        response: { 200: SignInResult, ...errorResponses, ...limited, ...writeErrorResponses },
        detail: detail(
          'PostAuthenticateWebauthn',
          'Sign in with a passkey',
          "`challenge_id` from the options and `response`, the browser's `AuthenticationResponseJSON` (`credential.toJSON()`). 200 `{token, person_id}`, or, when the organization's policy asks for a second factor, `{person_id, mfa_required: true, mfa_token, methods}` (finish with POST /authenticate/mfa). 400 when the challenge is unknown, answered already or expired; 401 with one body for an unknown passkey, a signature that does not verify, another origin or relying party, a sign counter that went back, or a disabled person; 403 when the policy does not allow webauthn or the token_minted hook blocks the token.",
        ),
      },
    )
    .post(
      '/authenticate/mfa/webauthn-options',
      async ({ org, body, request }) =>
        ok(
          await consistentWrite(request, ctx.headers, () =>
            secondFactor.options(org.id, body.mfa_token, readContext(request)),
          ),
        ),
      {
        orgOnly: true,
        body: MfaOptionsBody,
        parse: 'json',
        headers: consistencyHeaders(ctx.headers),
        response: {
          200: RequestOptionsResult,
          ...errorResponses,
          409: ErrorEnvelopeSchema,
          ...limited,
          ...writeErrorResponses,
        },
        detail: detail(
          'PostAuthenticateMfaWebauthnOptions',
          'Passkey options for the second step of a sign-in',
          "For an `mfa_token` a first factor answered: a `challenge_id` and `PublicKeyCredentialRequestOptionsJSON` listing the person's passkeys. Answer with POST /authenticate/mfa `{mfa_token, method: webauthn, challenge_id, response}`. 401 when the token names no pending second step or its methods leave out webauthn; 409 when the person has no passkey.",
        ),
      },
    );
}
