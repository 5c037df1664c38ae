import { Elysia } from 'elysia';
import { consistentWrite } from '../../../core/http/consistency.ts';
import { ok } from '../../../core/http/envelope.ts';
import { consistencyHeaders, errorDoc, writeErrorDocs } from '../../../core/http/openapi-docs.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import { EmailCodeErrors } from '../errors.ts';
import { MfaSendBody, StartBody, VerifyBody } from '../schema.ts';
import type { createSecondFactorSender } from '../second-factor/send.ts';
import type { Completion } from '../sign-in/complete.ts';
import type { createSignInRequests } from '../sign-in/request.ts';
import type { createVerification } from '../sign-in/verify.ts';

export interface EmailRouteDeps {
  requests: ReturnType<typeof createSignInRequests>;
  verification: ReturnType<typeof createVerification>;
  sendSecondFactor: ReturnType<typeof createSecondFactorSender>;
  completion: Completion;
  readContext: (request: Request) => RequestContext;
  ttlMinutes: number;
}

const TAGS = ['Email sign-in'];

const challengeDoc = (what: string) => ({
  description: `${what}: \`{result: {challenge_id, expires_at}}\` (RFC 3339, when the code or link stops working)`,
  content: {
    'application/json': {
      schema: {
        type: 'object' as const,
        properties: {
          result: {
            type: 'object' as const,
            properties: {
              challenge_id: { type: 'string' as const },
              expires_at: { type: 'string' as const },
            },
          },
        },
      },
    },
  },
});

/** POST /authenticate/email, POST /authenticate/email/verify and POST /authenticate/mfa/email. */
export function emailRoutes(ctx: ServiceContext, deps: EmailRouteDeps) {
  const { ttlMinutes } = deps;
  return new Elysia()
    .use(ctx.auth)
    .post(
      '/authenticate/email',
      async ({ org, body, request, set }) => {
        const rc = deps.readContext(request);
        if (!(await deps.completion.allows(org.id, body.method))) {
          const error = EmailCodeErrors.FACTOR_NOT_ALLOWED(body.method);
          await deps.completion.failed(
            org.id,
            rc,
            body.method,
            body.handle,
            'method_not_allowed',
            error.message,
          );
          throw error;
        }
        const answer = await consistentWrite(request, ctx.headers, () =>
          deps.requests.accept(org.id, body.handle, body.method, rc),
        );
        set.status = 202;
        return ok(answer);
      },
      {
        orgOnly: true,
        body: StartBody,
        parse: 'json',
        headers: consistencyHeaders(ctx.headers),
        detail: {
          operationId: 'AuthenticateEmail',
          summary: 'Send a sign-in code or link by email',
          description: `End-user facing: \`Service-OrgID\` only. \`method\`: \`otp_via_email\` sends a 6-digit code, \`email_link\` a link to a page whose button confirms the sign-in. Both work once, for ${ttlMinutes} minutes. The answer is the same 202, in the same time, whether or not the handle names a person (the message is sent in the background, only to an active person holding the address). Then POST /authenticate/email/verify with the \`challenge_id\`. 400 for a handle that is not an email address; 403 when the organization's policy does not allow the method; 429 with Retry-After past the per-handle or per-address limit.`,
          responses: {
            202: challengeDoc('The challenge'),
            400: errorDoc('A body member breaks its rule (the message names it)'),
            403: errorDoc("The organization's authentication policy does not allow this method"),
            429: errorDoc('Too many messages for this handle or from this address (Retry-After)'),
            ...writeErrorDocs,
          },
          tags: TAGS,
          security: [{ orgId: [] }],
        },
      },
    )
    .post(
      '/authenticate/email/verify',
      async ({ org, body, request, set }) => {
        const rc = deps.readContext(request);
        const outcome = await consistentWrite(request, ctx.headers, () =>
          deps.verification.verify(org.id, body, rc),
        );
        if (!outcome.done) {
          set.status = 202;
          return ok(outcome.pending);
        }
        return ok(outcome.answer);
      },
      {
        orgOnly: true,
        body: VerifyBody,
        parse: 'json',
        headers: consistencyHeaders(ctx.headers),
        detail: {
          operationId: 'AuthenticateEmailVerify',
          summary: 'Finish an email sign-in: the code, or the confirmed link',
          description:
            "End-user facing: `Service-OrgID` only. For `otp_via_email`, `{challenge_id, code}`: 200 with the token when the code matches. For `email_link`, `{challenge_id}` alone, polled every few seconds: 202 `{status: pending}` until the person presses the button of the link's page, then 200 with the token, once. When the policy asks for a second factor, 200 `{person_id, mfa_required: true, mfa_token, methods}` instead of the token. 401 for a wrong code (a challenge takes a few), an unknown, expired or used challenge; 429 with Retry-After past the per-handle, per-address or polling limit, or for a challenge voided by wrong codes.",
          responses: {
            200: { description: '`{result: {token, person_id}}`, or the second step' },
            202: {
              description:
                'An email_link not confirmed yet: `{result: {challenge_id, status: "pending", expires_at}}`',
            },
            400: errorDoc(
              'A body member breaks its rule (a code to an email_link challenge, none to a code)',
            ),
            401: errorDoc('The code does not match, or the challenge is unknown, expired or used'),
            403: errorDoc(
              "The organization's policy does not allow the method, or the token_minted hook blocked the token",
            ),
            429: errorDoc('Too many attempts (Retry-After)'),
            ...writeErrorDocs,
          },
          tags: TAGS,
          security: [{ orgId: [] }],
        },
      },
    )
    .post(
      '/authenticate/mfa/email',
      async ({ org, body, request, set }) => {
        const rc = deps.readContext(request);
        const answer = await consistentWrite(request, ctx.headers, () =>
          deps.sendSecondFactor.send(org.id, body.mfa_token, rc),
        );
        set.status = 202;
        return ok(answer);
      },
      {
        orgOnly: true,
        body: MfaSendBody,
        parse: 'json',
        headers: consistencyHeaders(ctx.headers),
        detail: {
          operationId: 'AuthenticateMfaEmail',
          summary: 'Send a second-factor code by email',
          description: `End-user facing: \`Service-OrgID\` only. For the second step an \`mfa_token\` names (a first factor answered \`mfa_required\` with \`otp_via_email\` among its methods): sends a 6-digit code to the person's email address (the first verified one), valid ${ttlMinutes} minutes. POST /authenticate/mfa \`{mfa_token, method: otp_via_email, challenge_id, code}\` completes the sign-in. 401 for an unknown, expired or used mfa_token or one otp_via_email does not complete; 409 when the person has no email address; 429 with Retry-After.`,
          responses: {
            202: challengeDoc('The code is on its way'),
            400: errorDoc('A body member breaks its rule'),
            401: errorDoc('The mfa_token names no pending second step that otp_via_email completes'),
            409: errorDoc('The person has no email address'),
            429: errorDoc('Too many messages for this address or from this client (Retry-After)'),
            ...writeErrorDocs,
          },
          tags: TAGS,
          security: [{ orgId: [] }],
        },
      },
    );
}
