import type {
  EmailCodeOutcome,
  HostedLoginEmailCodes,
  HostedLoginLink,
} from '../../../core/capabilities/hosted-login-email-codes.ts';
import { addressBucket } from '../../../core/http/client.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { TokenBuckets } from '../../../core/rate-limit/index.ts';
import { closedReason } from '../challenges/code-check.ts';
import { challengeDigest, LINK_TOKEN_SHAPE, linkDigest } from '../challenges/secrets.ts';
import type { Challenge, ChallengeStore } from '../challenges/store.ts';
import { EmailCodeErrors } from '../errors.ts';
import { outcomeOf } from '../outcome.ts';
import type { Completion } from '../sign-in/complete.ts';
import type { createSignInRequests } from '../sign-in/request.ts';
import { tooMany } from '../sign-in/request.ts';
import type { createVerification } from '../sign-in/verify.ts';

type LinkMethods = Pick<
  HostedLoginEmailCodes,
  'sendLink' | 'openLink' | 'useLinkHere' | 'confirmLink' | 'useLink'
>;

/** What the link's page says of a link it cannot use. */
const REFUSED = {
  unknown: 'This link is unknown: no sign-in was asked for with it.',
  expired: 'This link has expired.',
  used: 'This link has been used already.',
  exhausted: 'This sign-in was stopped.',
  confirmed: 'This sign-in is confirmed already: go back to the window where you asked for it.',
} as const;

const refused = (why: keyof typeof REFUSED): EmailCodeOutcome<never> => ({
  ok: false,
  reason: 'refused',
  message: REFUSED[why],
});

const linkOf = (c: Challenge, binding: string): HostedLoginLink => ({
  orgId: c.orgId,
  binding,
  handle: c.handle.value,
  askedAt: new Date(c.createdAt).toISOString(),
  askedFrom: c.requestedIp,
  askedWith: c.requestedUserAgent,
});

/**
 * The hosted login's email_link (the link methods of hostedLoginEmailCodes): a link bound to one login
 * of the hosted login, whose page (the hosted login's) uses it at once in that login's browser, or
 * confirms it for that login's window to use with its challenge ID. The API's challenge store, limits
 * and events (AuthenticationFailed_v1 with `email_link` for each refusal of a known link).
 */
export function hostedLoginLinksOf(deps: {
  clock: Clock;
  store: ChallengeStore;
  requests: ReturnType<typeof createSignInRequests>;
  verification: ReturnType<typeof createVerification>;
  completion: Completion;
  /** Link pages opened and pressed per client address (the API link page's limit). */
  perAddress: TokenBuckets;
  /** "Continue" presses per challenge (the API's polls' limit). */
  perPoll: TokenBuckets;
}): LinkMethods {
  const { store, verification } = deps;
  const notOffered = {
    ok: false as const,
    reason: 'refused' as const,
    message: 'Signing in with a link by email is not offered here.',
  };

  /** The hosted-login link of a token (whatever its state), or undefined. */
  async function byToken(token: string): Promise<(Challenge & { boundTo: string }) | undefined> {
    if (!LINK_TOKEN_SHAPE.test(token)) return undefined;
    const c = await store.findByLink(await linkDigest(token));
    return c && c.boundTo !== null ? { ...c, boundTo: c.boundTo } : undefined;
  }

  /** Refuses a closed challenge (AuthenticationFailed_v1), as POST /authenticate/email/verify does. */
  async function refuseClosed(c: Challenge, rc: RequestContext): Promise<void> {
    const closed = closedReason(c, deps.clock.now());
    if (!closed) return;
    await verification.refuser(c.orgId, rc)(
      'email_link',
      c,
      closed === 'exhausted' ? 'too_many_attempts' : closed,
      verification.refusal(closed),
    );
  }

  return {
    async sendLink(orgId, handle, rc, bound) {
      try {
        if (!(await deps.completion.allows(orgId, 'email_link'))) return notOffered;
        const sent = await deps.requests.accept(orgId, handle, 'email_link', rc, bound);
        return { ok: true, challengeId: sent.challenge_id, expiresAt: sent.expires_at };
      } catch (error) {
        return outcomeOf(error);
      }
    },

    async openLink(token, rc) {
      if (rc.clientIp) {
        const take = await deps.perAddress.take(`link|${addressBucket(rc.clientIp)}`);
        if (!take.ok)
          return {
            ok: false,
            reason: 'rate_limited',
            retryAfter: take.retryAfterSeconds,
            message: 'Too many sign-in links were opened from this address.',
          };
      }
      const c = await byToken(token);
      if (!c) return refused('unknown');
      if (c.status === 'confirmed') return refused('confirmed');
      const closed = closedReason(c, deps.clock.now());
      return closed ? refused(closed) : { ok: true, link: linkOf(c, c.boundTo) };
    },

    async useLinkHere(token, binding, rc) {
      try {
        const c = await byToken(token);
        if (c?.boundTo !== binding) return refused('unknown');
        if (!(await deps.completion.allows(c.orgId, 'email_link'))) return notOffered;
        await refuseClosed(c, rc);
        // Pressed here after another browser confirmed it: the confirmed link is this login's too.
        const used = await verification.use(c.orgId, c, rc, c.status === 'confirmed' ? 'confirmed' : 'sent');
        return { ok: true, personId: used.person.personId, authentication: used.authentication };
      } catch (error) {
        return outcomeOf(error);
      }
    },

    async confirmLink(token) {
      const c = await byToken(token);
      if (!c) return refused('unknown');
      if (!(await deps.completion.allows(c.orgId, 'email_link'))) return notOffered;
      if (await store.confirmLink(await linkDigest(token))) return { ok: true, link: linkOf(c, c.boundTo) };
      const now = await byToken(token);
      if (now?.status === 'confirmed') return refused('confirmed');
      return refused((now && closedReason(now, deps.clock.now())) || 'used');
    },

    async useLink(orgId, challengeId, binding, rc) {
      try {
        const c = await store.find(orgId, await challengeDigest(challengeId));
        // Another login's link (or another organization's, or a code's) is unknown to this one.
        if (c?.method !== 'email_link' || c.boundTo !== binding)
          return await verification.refuser(orgId, rc)(
            'email_link',
            undefined,
            'unknown_challenge',
            EmailCodeErrors.CHALLENGE_REFUSED('challenge_id: no email link of this sign-in'),
          );
        if (!(await deps.completion.allows(orgId, 'email_link'))) return notOffered;
        const take = await deps.perPoll.take(c.digest);
        if (!take.ok) throw tooMany(take.retryAfterSeconds, 'pressed too often');
        await refuseClosed(c, rc);
        if (c.status !== 'confirmed')
          return {
            ok: false,
            reason: 'pending',
            message: 'The link has not been pressed yet: open it from the email and press its button.',
          };
        const used = await verification.use(orgId, c, rc, 'confirmed');
        return { ok: true, personId: used.person.personId, authentication: used.authentication };
      } catch (error) {
        return outcomeOf(error);
      }
    },
  };
}
