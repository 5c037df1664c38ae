import type { DocumentDecoration } from 'elysia';
import { Elysia } from 'elysia';
import type { BrowserBinding } from '../../../core/http/browser-binding.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import { AuthorizeErrors } from '../errors.ts';
import type { LoginAnswer } from '../login/answer.ts';
import type { Login } from '../login/login.ts';
import { credentialJson } from '../login/passkey-sign-in.ts';
import { digest } from '../store/digest.ts';

/** The most a credential's JSON may take (an attestation object is the largest part). */
const MAX_RESPONSE = 65536;

export interface PasskeyRouteDeps {
  login: Login;
  browserCookie: BrowserBinding;
  readContext: (request: Request) => RequestContext;
  /** A form posted by a page of this service (same origin, form-encoded), or the error page. */
  formOf: (request: Request) => Promise<URLSearchParams>;
  render: (answer: LoginAnswer) => Response;
  errorAnswer: (error: unknown) => Response;
  /** The organization's sign-in session cookie a request carries. */
  sessionSecret: (request: Request, orgId: string) => string | undefined;
}

/** One field given once, not empty, at most `max` characters. */
function field(body: URLSearchParams, name: string, max: number): string {
  const all = body.getAll(name);
  if (all.length !== 1 || !all[0])
    throw AuthorizeErrors.INVALID_FORM(`${name} must be given once and not be empty`);
  if (all[0].length > max) throw AuthorizeErrors.INVALID_FORM(`${name} must be at most ${max} characters`);
  return all[0];
}

const TAGS = ['OAuth 2.0'];

const ceremonyFields = {
  csrf_token: { type: 'string', description: 'From the page: names the sign-in under way' },
  challenge_id: { type: 'string', maxLength: 64, description: "From the page: the ceremony's challenge" },
  response: {
    type: 'string',
    maxLength: MAX_RESPONSE,
    description: "The browser's credential as JSON (`PublicKeyCredential.toJSON()`)",
  },
} as const;

const passkeyDoc: DocumentDecoration = {
  requestBody: {
    required: true,
    content: {
      'application/x-www-form-urlencoded': {
        schema: {
          type: 'object',
          required: ['csrf_token', 'challenge_id', 'response'],
          properties: ceremonyFields,
        },
      },
    },
  },
  operationId: 'PostOauth2AuthorizePasskey',
  summary: 'Sign in with a passkey on the hosted login',
  description:
    "Posted by the login page's script after `navigator.credentials.get` (the passkey button, or passkey autofill): `csrf_token`, `challenge_id` and `response`. Offered only when the passkeys plugin is enabled and the organization's policy allows `webauthn` as a first factor (else 403, the page again). An assertion that does not verify answers the page again (401) and emits AuthenticationFailed_v1; a verified one continues as a password sign-in does: the second step when the policy asks for one, then the session and a redirect (303) to the client with `code`, `state` and `iss` (the ID token's `amr` holds `hwk`).",
  responses: {
    303: { description: 'Back to the client with the code, or an error' },
    400: { description: 'An HTML error page: the login expired, was completed, or the form is malformed' },
    401: { description: 'The page again: the passkey did not sign anyone in' },
    403: {
      description: 'The page again: passkeys are not offered here; or the form came from another browser',
    },
    429: { description: 'An HTML error page: too many passkey attempts from this address' },
  },
  tags: TAGS,
  security: [],
};

const offerDoc: DocumentDecoration = {
  requestBody: {
    required: true,
    content: {
      'application/x-www-form-urlencoded': {
        schema: {
          type: 'object',
          required: ['csrf_token', 'decision'],
          properties: {
            ...ceremonyFields,
            decision: {
              type: 'string',
              enum: ['add', 'skip'],
              description:
                '`add` with `challenge_id` and `response` (from `navigator.credentials.create`), or `skip`',
            },
          },
        },
      },
    },
  },
  operationId: 'PostOauth2AuthorizePasskeyOffer',
  summary: "The hosted login's offer to add a passkey",
  description:
    'After a sign-in by another factor, when the organization\'s policy allows passkeys and the person has none, the hosted login asks "Add a passkey?" before answering the client. `add` registers the passkey (a registration that does not verify answers the page again, 400), `skip` adds nothing; both then redirect (303) to the client with `code`, `state` and `iss`. Only the browser holding the new session can answer, once.',
  responses: {
    303: { description: 'Back to the client with the code' },
    400: {
      description:
        'The page again (the passkey was not added), or an HTML error page: the form is malformed or was answered',
    },
    403: { description: "An HTML error page: the session the offer was made in is not this browser's" },
  },
  tags: TAGS,
  security: [],
};

const secondDoc: DocumentDecoration = {
  requestBody: passkeyDoc.requestBody,
  operationId: 'PostOauth2AuthorizeSecondFactorPasskey',
  summary: 'A passkey as the second step of the hosted login',
  description:
    "Posted by the second-step page's script after `navigator.credentials.get` with the person's own passkeys, when the policy counts `webauthn` as a second factor and the person has a passkey: `csrf_token`, `challenge_id` and `response`, checked by the passkeys plugin (`checkSecondFactor`). As POST /oauth2/authorize/second-factor: a wrong answer gives the page again (401) and AuthenticationFailed_v1; a right one starts the session with both factors and redirects (303) to the client.",
  responses: {
    303: { description: 'Back to the client with the code, or an error' },
    400: { description: 'An HTML error page: the sign-in expired, was completed, or the form is malformed' },
    401: { description: 'The page again: the passkey did not answer' },
    403: { description: 'An HTML error page: the form did not come from the browser that signed in' },
  },
  tags: TAGS,
  security: [],
};

/** The hosted login's passkey routes: the sign-in button's answer, the offer's, the second step's. */
export function passkeyRoutes(deps: PasskeyRouteDeps) {
  const browserHash = async (request: Request) => {
    const sent = deps.browserCookie.sent(request);
    return sent ? await digest(sent) : undefined;
  };
  return new Elysia()
    .post(
      '/oauth2/authorize/passkey',
      async ({ request }) => {
        try {
          const body = await deps.formOf(request);
          const form = {
            csrfToken: field(body, 'csrf_token', 256),
            challengeId: field(body, 'challenge_id', 64),
            response: field(body, 'response', MAX_RESPONSE),
          };
          return deps.render(
            await deps.login.passkeySignIn(form, await browserHash(request), deps.readContext(request)),
          );
        } catch (error) {
          return deps.errorAnswer(error);
        }
      },
      { parse: 'none', detail: passkeyDoc },
    )
    .post(
      '/oauth2/authorize/passkey/offer',
      async ({ request }) => {
        try {
          const body = await deps.formOf(request);
          const decision = field(body, 'decision', 8);
          if (decision !== 'add' && decision !== 'skip')
            throw AuthorizeErrors.INVALID_FORM('decision must be add or skip');
          const form = {
            csrfToken: field(body, 'csrf_token', 256),
            decision,
            ...(decision === 'add'
              ? {
                  challengeId: field(body, 'challenge_id', 64),
                  response: field(body, 'response', MAX_RESPONSE),
                }
              : {}),
          } as const;
          return deps.render(
            await deps.login.passkeyOffer(
              form,
              (orgId) => deps.sessionSecret(request, orgId),
              deps.readContext(request),
            ),
          );
        } catch (error) {
          return deps.errorAnswer(error);
        }
      },
      { parse: 'none', detail: offerDoc },
    )
    .post(
      '/oauth2/authorize/second-factor/passkey',
      async ({ request }) => {
        try {
          const body = await deps.formOf(request);
          const form = {
            csrfToken: field(body, 'csrf_token', 256),
            method: 'webauthn',
            code: '',
            input: {
              challenge_id: field(body, 'challenge_id', 64),
              response: credentialJson(field(body, 'response', MAX_RESPONSE)),
            },
          };
          return deps.render(
            await deps.login.secondFactor(form, await browserHash(request), deps.readContext(request)),
          );
        } catch (error) {
          return deps.errorAnswer(error);
        }
      },
      { parse: 'none', detail: secondDoc },
    );
}
