import { Elysia } from 'elysia';
import * as v from 'valibot';
import { HANDLE_TYPES } from '../../../core/capabilities/person-directory.ts';
import { consistentWrite } from '../../../core/http/consistency.ts';
import { ok } from '../../../core/http/envelope.ts';
import { formGuard, pageResponse, readForm } from '../../../core/http/hosted-page.ts';
import {
  API_KEY_SECURITY,
  consistencyHeaders,
  errorDoc,
  writeErrorDocs,
} from '../../../core/http/openapi-docs.ts';
import type { TemplateRenderer } from '../../../core/messaging/templates.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import type { TokenBuckets } from '../../../core/rate-limit/index.ts';
import { parsePersonId } from '../api/input.ts';
import { PersonErrors } from '../errors.ts';
import { normaliseHandle } from '../handles.ts';
import type { PersonStore } from '../store/persons.ts';
import { confirmPage, verificationRefusedPage, verifiedPage } from './page.ts';
import type { emailVerificationTemplate } from './template.ts';
import type { VerificationRefusal, VerificationTokens } from './tokens.ts';

export interface VerificationDeps {
  store: PersonStore;
  tokens: VerificationTokens;
  render: TemplateRenderer<(typeof emailVerificationTemplate.variables)[number]>;
  /** Links sent per person. */
  perPerson: TokenBuckets;
}

const TAGS = ['Persons'];
const HOURS = 3_600_000;

const VerifyBody = v.object({
  handle: v.object({
    type: v.picklist(HANDLE_TYPES, `must be one of ${HANDLE_TYPES.join(', ')}`),
    value: v.pipe(v.string(), v.maxLength(320, 'must be at most 320 characters')),
  }),
});

const REFUSALS: Record<VerificationRefusal, string> = {
  unknown: 'This link is unknown: no confirmation was asked for with it.',
  expired: 'This link has expired. Ask for a new confirmation message.',
  used: 'This link has been used already.',
};

/**
 * POST /persons/{person_id}/handles/verify (the API key: send a link) and the page the link opens,
 * GET, POST /email/verify: a button, so that a mail scanner opening the link verifies nothing.
 */
export function verificationRoutes(ctx: ServiceContext, deps: VerificationDeps) {
  const { store, tokens } = deps;
  const ttlHours = Math.round(tokens.ttlMs / HOURS);
  const pagePath = `${ctx.config.publicBaseUrl}/email/verify`;
  const guard = formGuard({
    baseUrl: ctx.config.publicBaseUrl,
    name: 'email_verify_form',
    path: '/email/verify',
    maxAgeSeconds: 3600,
  });
  const refused = (refusal: VerificationRefusal) =>
    pageResponse(400, verificationRefusedPage(REFUSALS[refusal]));

  return new Elysia()
    .use(ctx.auth)
    .post(
      '/persons/:person_id/handles/verify',
      async ({ org, params, body, request, set }) => {
        const personId = parsePersonId(params.person_id);
        const handle = normaliseHandle(body.handle, 'body.handle');
        if (handle.type !== 'email_address')
          throw PersonErrors.HANDLE_NOT_VERIFIABLE(
            handle.type === 'phone_number'
              ? 'body.handle: phone numbers cannot be verified yet (no SMS transport); set verified: true through PUT /persons when the organization has proven one'
              : 'body.handle: a username reaches nobody and cannot be verified',
          );
        const person = await store.get(org.id, personId);
        const held = person.handles.find((h) => h.type === handle.type && h.value === handle.value);
        if (!held)
          throw PersonErrors.HANDLE_NOT_VERIFIABLE(
            `body.handle: ${JSON.stringify(handle.value)} is not a handle of person ${personId}`,
          );
        if (held.verified) throw PersonErrors.HANDLE_ALREADY_VERIFIED(handle.value);
        const take = await deps.perPerson.take(`${org.id}|${personId}`);
        if (!take.ok)
          throw PersonErrors.TOO_MANY_VERIFICATIONS.with({
            headers: { 'retry-after': String(take.retryAfterSeconds) },
          })(`too many verification links for this person; retry after ${take.retryAfterSeconds} s`);
        const organization = (await ctx.orgs.get(org.id))?.name ?? '';
        const made = await tokens.make();
        const link = `${pagePath}?token=${made.token}`;
        const message = await ctx.messages.prepare({
          orgId: org.id,
          to: handle,
          ...deps.render({ organization, link, expires_hours: String(ttlHours), handle: handle.value }),
          fromName: organization,
          link,
          kind: 'email-verification',
          notAfter: made.expiresAt,
        });
        await consistentWrite(request, ctx.headers, () =>
          ctx.storage.transaction(async (tx) => {
            await tokens.issue(tx, { orgId: org.id, personId, handle }, made);
            await ctx.messages.send(message, { tx });
          }),
        );
        set.status = 202;
        return ok({ handle, expires_at: new Date(made.expiresAt).toISOString() });
      },
      {
        apiKey: true,
        params: v.object({ person_id: v.string() }),
        body: VerifyBody,
        parse: 'json',
        headers: consistencyHeaders(ctx.headers),
        detail: {
          operationId: 'PostPersonsPersonIdHandlesVerify',
          summary: 'Send a verification link to one of a person’s email addresses',
          description: `Queues a message with a single-use link (valid ${ttlHours} hours) to the email address; following it and pressing the button marks the handle verified (shown as \`verified\` in person reads). 400 for a handle the person does not hold, a username, or a phone number (no SMS transport yet); 409 when it is verified already; 429 with Retry-After past the per-person limit.`,
          responses: {
            202: {
              description:
                'The link is on its way: `{result: {handle: {type, value}, expires_at}}` (RFC 3339, when the link stops working)',
            },
            400: errorDoc('Not an email address of this person'),
            404: errorDoc('No such person in this organization'),
            409: errorDoc('The handle is verified already'),
            429: errorDoc('Too many links for this person (Retry-After)'),
            ...writeErrorDocs,
          },
          tags: TAGS,
          security: API_KEY_SECURITY,
        },
      },
    )
    .get(
      '/email/verify',
      async ({ request }) => {
        const token = new URL(request.url).searchParams.get('token') ?? '';
        const found = await tokens.find(token);
        if (!found.ok) return refused(found.refusal);
        const organization = (await ctx.orgs.get(found.verification.orgId))?.name ?? '';
        const { token: csrfToken, cookie } = guard.issue();
        return pageResponse(
          200,
          confirmPage({ organization, handle: found.verification.handle.value, token, csrfToken }),
          { 'set-cookie': cookie },
        );
      },
      {
        detail: {
          operationId: 'GetEmailVerifyPage',
          summary: 'The email verification page',
          description:
            'Where verification links lead: `?token=`. A server-rendered page (no script, no external asset, a strict Content-Security-Policy) with one button that confirms; opening the link alone changes nothing. An unusable link answers a page saying why (400).',
          parameters: [{ name: 'token', in: 'query', required: true, schema: { type: 'string' } }],
          responses: {
            200: { description: 'The page', content: { 'text/html': { schema: { type: 'string' } } } },
            400: { description: 'A page: the link is unknown, expired or used' },
          },
          tags: TAGS,
          security: [],
        },
      },
    )
    .post(
      '/email/verify',
      async ({ request }) => {
        const read = await readForm(request, ['csrf_token', 'token']);
        if (!read.ok) return pageResponse(400, verificationRefusedPage(read.problem));
        const refusal = guard.refusal(request, read.form.csrf_token);
        if (refusal) {
          const error = PersonErrors.VERIFICATION_FORM_FORBIDDEN(refusal);
          return pageResponse(error.status, verificationRefusedPage(error.message));
        }
        const found = await tokens.find(read.form.token);
        if (!found.ok) return refused(found.refusal);
        if (!(await tokens.consume(read.form.token))) {
          const now = await tokens.find(read.form.token);
          return refused(now.ok ? 'used' : now.refusal);
        }
        return pageResponse(200, verifiedPage(found.verification.handle.value));
      },
      {
        parse: 'none',
        detail: {
          operationId: 'PostEmailVerifyPage',
          summary: 'Confirm an email address',
          description:
            'Posted by the page of GET /email/verify, form-encoded: `csrf_token` (bound to the page’s httpOnly SameSite=Strict cookie) and `token`. Marks the handle verified once.',
          responses: {
            200: { description: 'A page: the address is confirmed' },
            400: { description: 'A page: the link is unknown, expired or used' },
            403: { description: 'A page: the form did not come from the page this browser opened' },
          },
          tags: TAGS,
          security: [],
        },
      },
    );
}
