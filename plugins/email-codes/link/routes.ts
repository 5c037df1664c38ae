import { Elysia } from 'elysia';
import { addressBucket } from '../../../core/http/client.ts';
import { formGuard, pageResponse, readForm } from '../../../core/http/hosted-page.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import type { TokenBuckets } from '../../../core/rate-limit/index.ts';
import { closedReason } from '../challenges/code-check.ts';
import { LINK_TOKEN_SHAPE, linkDigest } from '../challenges/secrets.ts';
import type { Challenge, ChallengeStore } from '../challenges/store.ts';
import { confirmSignInPage, signInConfirmedPage, signInLinkRefusedPage } from './page.ts';

const TAGS = ['Email sign-in'];

const REFUSALS = {
  unknown: 'This link is unknown: no sign-in was asked for with it.',
  expired: 'This link has expired.',
  used: 'This link has been used already.',
  exhausted: 'This sign-in was stopped.',
  confirmed: 'This sign-in is confirmed already: go back to where you asked for it.',
  limited: 'Too many sign-in links were opened from this address: wait a minute and open it again.',
} as const;

/**
 * The page of a sign-in link, GET and POST /email/sign-in: the link shows a page, its button confirms
 * the challenge, and the caller that asked (polling POST /authenticate/email/verify with its
 * challenge_id) then receives the token. No OrgID: the token names the challenge.
 */
export function linkRoutes(
  ctx: ServiceContext,
  deps: {
    store: ChallengeStore;
    readContext: (request: Request) => RequestContext;
    perAddress: TokenBuckets;
  },
) {
  const { store } = deps;
  const guard = formGuard({
    baseUrl: ctx.config.publicBaseUrl,
    name: 'email_sign_in_form',
    path: '/email/sign-in',
    maxAgeSeconds: 3600,
  });
  const refused = (why: keyof typeof REFUSALS, status = 400) =>
    pageResponse(status, signInLinkRefusedPage(REFUSALS[why]));

  /** The open link challenge of a token, or why there is none. */
  async function open(token: string): Promise<Challenge | keyof typeof REFUSALS> {
    if (!LINK_TOKEN_SHAPE.test(token)) return 'unknown';
    const c = await store.findByLink(await linkDigest(token));
    // A hosted login's link has its own page (the login it finishes): unknown here.
    if (!c || c.boundTo !== null) return 'unknown';
    if (c.status === 'confirmed') return 'confirmed';
    return closedReason(c, ctx.clock.now()) ?? c;
  }

  async function limited(request: Request) {
    const { clientIp } = deps.readContext(request);
    if (!clientIp) return false;
    return !(await deps.perAddress.take(`link|${addressBucket(clientIp)}`)).ok;
  }

  return new Elysia()
    .get(
      '/email/sign-in',
      async ({ request }) => {
        if (await limited(request)) return refused('limited', 429);
        const token = new URL(request.url).searchParams.get('token') ?? '';
        const c = await open(token);
        if (typeof c === 'string') return refused(c);
        const organization = (await ctx.orgs.get(c.orgId))?.name ?? '';
        const { token: csrfToken, cookie } = guard.issue();
        return pageResponse(
          200,
          confirmSignInPage({
            organization,
            handle: c.handle.value,
            token,
            csrfToken,
            askedAt: new Date(c.createdAt).toISOString(),
            askedFrom: c.requestedIp,
            askedWith: c.requestedUserAgent,
          }),
          { 'set-cookie': cookie },
        );
      },
      {
        detail: {
          operationId: 'GetEmailSignInPage',
          summary: 'The page of an email sign-in link',
          description:
            'Where email_link messages lead: `?token=`. A server-rendered page (no script, no external asset, a strict Content-Security-Policy) saying who asked, when and from where, with one button that confirms the sign-in; opening the link alone confirms nothing, so a mail scanner signs nobody in. An unusable link answers a page saying why (400).',
          parameters: [{ name: 'token', in: 'query', required: true, schema: { type: 'string' } }],
          responses: {
            200: { description: 'The page', content: { 'text/html': { schema: { type: 'string' } } } },
            400: { description: 'A page: the link is unknown, expired, used or confirmed already' },
            429: { description: 'A page: too many links opened from this address' },
          },
          tags: TAGS,
          security: [],
        },
      },
    )
    .post(
      '/email/sign-in',
      async ({ request }) => {
        const read = await readForm(request, ['csrf_token', 'token']);
        if (!read.ok) return pageResponse(400, signInLinkRefusedPage(read.problem));
        const refusal = guard.refusal(request, read.form.csrf_token);
        if (refusal) return pageResponse(403, signInLinkRefusedPage(refusal));
        if (await limited(request)) return refused('limited', 429);
        const c = await open(read.form.token);
        if (typeof c === 'string') return refused(c);
        if (!(await store.confirmLink(await linkDigest(read.form.token)))) {
          const now = await open(read.form.token);
          return refused(typeof now === 'string' ? now : 'used');
        }
        const organization = (await ctx.orgs.get(c.orgId))?.name ?? '';
        return pageResponse(200, signInConfirmedPage(organization));
      },
      {
        parse: 'none',
        detail: {
          operationId: 'PostEmailSignInPage',
          summary: 'Confirm an email sign-in link',
          description:
            'Posted by the page of GET /email/sign-in, form-encoded: `csrf_token` (bound to the page’s httpOnly SameSite=Strict cookie) and `token`. Confirms the challenge once; the caller that asked receives the token from POST /authenticate/email/verify.',
          responses: {
            200: { description: 'A page: the sign-in is confirmed' },
            400: { description: 'A page: the link is unknown, expired, used or confirmed already' },
            403: { description: 'A page: the form did not come from the page this browser opened' },
            429: { description: 'A page: too many links opened from this address' },
          },
          tags: TAGS,
          security: [],
        },
      },
    );
}
