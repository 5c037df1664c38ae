import { Elysia } from 'elysia';
import * as v from 'valibot';
import { ServiceError } from '../../../core/errors.ts';
import { addressBucket } from '../../../core/http/client.ts';
import { consistentWrite } from '../../../core/http/consistency.ts';
import { errorResponses } from '../../../core/http/envelope.ts';
import { formGuard, pageResponse, readForm } from '../../../core/http/hosted-page.ts';
import { consistencyHeaders, errorDoc, writeErrorDocs } from '../../../core/http/openapi-docs.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import type { TokenBuckets } from '../../../core/rate-limit/index.ts';
import { PasswordErrors } from '../errors.ts';
import type { ResetConfirmation } from './confirm.ts';
import { resetDonePage, resetFormPage, resetRefusedPage } from './page.ts';
import type { createResetRequests } from './request.ts';

export interface ResetRouteDeps {
  requests: ReturnType<typeof createResetRequests>;
  confirmation: ResetConfirmation;
  readContext: (request: Request) => RequestContext;
  /** Confirmations (API and form) per client address. */
  confirmPerAddress: TokenBuckets;
}

const TAGS = ['Password reset'];

const Handle = v.object({
  type: v.picklist(
    ['email_address', 'phone_number', 'username'],
    'must be email_address, phone_number or username',
  ),
  value: v.pipe(
    v.string('must be a string'),
    v.minLength(1, 'must not be empty'),
    v.maxLength(320, 'must be at most 320 characters'),
  ),
});
const RequestBody = v.object({ handle: Handle });
const ConfirmBody = v.object({
  token: v.pipe(v.string('must be a string'), v.maxLength(256, 'must be at most 256 characters')),
  password: v.pipe(v.string('must be a string'), v.maxLength(1024, 'must be at most 1024 characters')),
});
const Accepted = v.object({ result: v.object({ status: v.literal('accepted') }) });

/** A page's wording of a refusal: the API's message without its field name, as a sentence. */
const sentence = (message: string) => {
  const text = message.replace(/^token: /, '');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
};

/**
 * POST /authenticate/password/reset (ask for a link), POST /authenticate/password/reset/confirm (set the
 * password with its token), and the hosted page GET, POST /password/reset.
 */
export function resetRoutes(ctx: ServiceContext, deps: ResetRouteDeps) {
  const { confirmation } = deps;
  const guard = formGuard({
    baseUrl: ctx.config.publicBaseUrl,
    name: 'password_reset_form',
    path: '/password/reset',
    maxAgeSeconds: Math.max(60, confirmation.ttlMinutes * 60),
  });

  /** The confirmation limit per client address; a 429 that says when to retry. */
  async function limitConfirmations(rc: RequestContext) {
    if (!rc.clientIp) return;
    const take = await deps.confirmPerAddress.take(addressBucket(rc.clientIp));
    if (!take.ok)
      throw PasswordErrors.TOO_MANY_ATTEMPTS.with({
        headers: { 'retry-after': String(take.retryAfterSeconds) },
      })(`too many password reset confirmations from this address; retry after ${take.retryAfterSeconds} s`);
  }

  const refusedPage = (error: ServiceError) =>
    pageResponse(error.status, resetRefusedPage(sentence(error.message)), error.headers ?? {});

  return new Elysia()
    .use(ctx.auth)
    .post(
      '/authenticate/password/reset',
      async ({ org, body, request, set }) => {
        await deps.requests.accept(org.id, body.handle, deps.readContext(request));
        set.status = 202;
        return { result: { status: 'accepted' as const } };
      },
      {
        orgOnly: true,
        body: RequestBody,
        parse: 'json',
        headers: consistencyHeaders(ctx.headers),
        response: { 202: Accepted, ...errorResponses },
        detail: {
          operationId: 'RequestPasswordReset',
          summary: 'Ask for a password reset link',
          description: `End-user facing: \`Service-OrgID\` only. Always 202 with the same body, whether or not the handle belongs to anyone, in comparable time (the lookup and the message happen after the answer). For an email_address handle of an active person, a message with a single-use link (valid ${confirmation.ttlMinutes} minutes) is queued; a newer request voids the older link. 429 with Retry-After past the per-handle or per-address limit; 400 for a malformed handle.`,
          tags: TAGS,
          security: [{ orgId: [] }],
        },
      },
    )
    .post(
      '/authenticate/password/reset/confirm',
      async ({ org, body, request, set }) => {
        await limitConfirmations(deps.readContext(request));
        await consistentWrite(request, ctx.headers, () =>
          confirmation.confirm(body.token, body.password, org.id),
        );
        set.status = 204;
      },
      {
        orgOnly: true,
        body: ConfirmBody,
        parse: 'json',
        headers: consistencyHeaders(ctx.headers),
        detail: {
          operationId: 'ConfirmPasswordReset',
          summary: 'Set a new password with a reset token',
          description:
            "End-user facing: `Service-OrgID` only (the organization's own reset page calls it). The token must be open, unexpired and of this organization; the password must meet the policy. Sets the password, voids the person's other reset links, revokes the person's earlier tokens (unless PASSWORD_RESET_REVOKE_TOKENS=false), and emits PasswordChanged_v1 with initiated_by EndUser (2) and the handle the link was sent to.",
          responses: {
            204: { description: 'The password is set' },
            400: errorDoc(
              'The token is unknown, expired, already used, superseded by a newer reset, or void after a password change (the message says which); or the password breaks the policy. Nothing changed.',
            ),
            429: errorDoc('Too many confirmations from this address (Retry-After)'),
            ...writeErrorDocs,
          },
          tags: TAGS,
          security: [{ orgId: [] }],
        },
      },
    )
    .get(
      '/password/reset',
      async ({ request }) => {
        const token = new URL(request.url).searchParams.get('token') ?? '';
        try {
          const reset = await confirmation.open(token);
          const organization = (await ctx.orgs.get(reset.orgId))?.name ?? '';
          const { token: csrfToken, cookie } = guard.issue();
          return pageResponse(
            200,
            resetFormPage({ organization, handle: reset.handle.value, token, csrfToken }),
            { 'set-cookie': cookie },
          );
        } catch (error) {
          if (error instanceof ServiceError) return refusedPage(error);
          throw error;
        }
      },
      {
        detail: {
          operationId: 'GetPasswordResetPage',
          summary: 'The hosted password reset page',
          description:
            'Where reset links lead (unless the organization set its own reset_url): `?token=`. A server-rendered form (no script, no external asset, a strict Content-Security-Policy, not framable, no Referer sent elsewhere) for the new password, with a double-submit CSRF token bound to an httpOnly SameSite=Strict cookie. An unusable link answers a page saying why (400).',
          parameters: [{ name: 'token', in: 'query', required: true, schema: { type: 'string' } }],
          responses: {
            200: { description: 'The form', content: { 'text/html': { schema: { type: 'string' } } } },
            400: { description: 'A page: the link is unknown, expired, used or superseded' },
          },
          tags: TAGS,
          security: [],
        },
      },
    )
    .post(
      '/password/reset',
      async ({ request }) => {
        const read = await readForm(request, ['csrf_token', 'token', 'password', 'password_confirm']);
        if (!read.ok) return refusedPage(PasswordErrors.INVALID_BODY(read.problem));
        const { form } = read;
        const refusal = guard.refusal(request, form.csrf_token);
        if (refusal) return refusedPage(PasswordErrors.RESET_FORM_FORBIDDEN(refusal));
        try {
          await limitConfirmations(deps.readContext(request));
          const reset = await confirmation.open(form.token);
          const organization = (await ctx.orgs.get(reset.orgId))?.name ?? '';
          const again = (status: number, error: string) =>
            pageResponse(
              status,
              resetFormPage({
                organization,
                handle: reset.handle.value,
                token: form.token,
                csrfToken: form.csrf_token,
                error,
              }),
            );
          if (form.password !== form.password_confirm)
            return again(400, 'The two passwords differ. Type the same new password twice.');
          try {
            await confirmation.confirm(form.token, form.password);
          } catch (error) {
            if (error instanceof ServiceError && error.code === PasswordErrors.INVALID_PASSWORD.code)
              return again(400, sentence(error.message.replace(/^password /, 'The password ')));
            throw error;
          }
          return pageResponse(200, resetDonePage(organization));
        } catch (error) {
          if (error instanceof ServiceError) return refusedPage(error);
          throw error;
        }
      },
      {
        parse: 'none',
        detail: {
          operationId: 'PostPasswordResetPage',
          summary: 'The hosted password reset form',
          description:
            'Posted by the page of GET /password/reset, form-encoded: `csrf_token`, `token`, `password`, `password_confirm`. The same checks and effects as POST /authenticate/password/reset/confirm. A password the policy refuses, or two that differ, answer the form again (400) with why.',
          responses: {
            200: { description: 'A page: the password is changed' },
            400: {
              description: 'The form again (policy, mismatch), or a page saying why the link is unusable',
            },
            403: { description: 'A page: the form did not come from the page this browser opened' },
            429: { description: 'A page: too many confirmations from this address' },
          },
          tags: TAGS,
          security: [],
        },
      },
    );
}
