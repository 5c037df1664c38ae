import type { PersonDirectory, PersonRecord } from '../../../core/capabilities/person-directory.ts';
import { signInCompletion } from '../../../core/capabilities/sign-in-completion.ts';
import { addressBucket } from '../../../core/http/client.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import type { TokenBuckets } from '../../../core/rate-limit/index.ts';
import { challengeDigest, codeDigest, newChallengeId, sixDigitCode } from '../challenges/secrets.ts';
import type { ChallengeStore } from '../challenges/store.ts';
import { EmailCodeErrors } from '../errors.ts';
import type { MessageRenderers } from '../sign-in/message.ts';
import { tooMany } from '../sign-in/request.ts';

/** The address a second-factor code goes to: the person's first verified email address, else the first. */
export function secondFactorAddress(person: PersonRecord) {
  const emails = person.handles.filter((h) => h.type === 'email_address');
  const chosen = emails.find((h) => h.verified) ?? emails[0];
  return chosen ? { type: chosen.type, value: chosen.value } : undefined;
}

/**
 * POST /authenticate/mfa/email: sends a code for the second step an mfa_token names, to the person's
 * email address, and answers its challenge (`POST /authenticate/mfa` with `method: otp_via_email`,
 * `challenge_id` and `code` completes it). The mfa_token proves the first factor, so the challenge is
 * stored and the message queued at once, in one transaction.
 */
export function createSecondFactorSender(deps: {
  ctx: ServiceContext;
  directory: PersonDirectory;
  store: ChallengeStore;
  render: MessageRenderers;
  perHandle: TokenBuckets;
  perAddress: TokenBuckets;
}) {
  const { ctx, store } = deps;
  const refused = () =>
    EmailCodeErrors.MFA_TOKEN_REFUSED('mfa_token: names no pending second step (unknown, expired or used)');

  const perAddress = async (orgId: string, rc: RequestContext) => {
    if (!rc.clientIp) return;
    const take = await deps.perAddress.take(`${orgId}|${addressBucket(rc.clientIp)}`);
    if (!take.ok)
      throw tooMany(take.retryAfterSeconds, 'too many sign-in messages asked for from this address');
  };

  async function send(
    orgId: string,
    mfaToken: string,
    rc: RequestContext,
  ): Promise<{ challenge_id: string; expires_at: string }> {
    await perAddress(orgId, rc);
    const pending = await ctx.capability(signInCompletion)?.pending(orgId, mfaToken);
    if (!pending) throw refused();
    if (!pending.methods.includes('otp_via_email'))
      throw EmailCodeErrors.MFA_TOKEN_REFUSED(
        `mfa_token: otp_via_email does not complete this sign-in (it takes ${pending.methods.join(', ') || 'no second factor'})`,
      );
    return sendFor(orgId, pending.personId, rc, refused);
  }

  /**
   * Sends the code to the person whose first factor succeeded (an mfa_token's, or the hosted login's
   * pending sign-in), past the address limit already.
   */
  async function sendFor(
    orgId: string,
    personId: string,
    rc: RequestContext,
    gone: () => Error,
  ): Promise<{ challenge_id: string; expires_at: string }> {
    const person = await deps.directory.get(orgId, personId);
    if (!person?.active) throw gone();
    const to = secondFactorAddress(person);
    if (!to || !ctx.messages.reaches('email_address'))
      throw EmailCodeErrors.NO_EMAIL_ADDRESS('the person has no email address to send a code to');
    const take = await deps.perHandle.take(`${orgId}|${to.type}|${to.value}`);
    if (!take.ok) throw tooMany(take.retryAfterSeconds, 'too many sign-in messages for this handle');
    const organization = (await ctx.orgs.get(orgId))?.name ?? '';
    const challengeId = newChallengeId();
    const code = sixDigitCode();
    const digest = await challengeDigest(challengeId);
    const expiresAt = store.expiresAt();
    const message = await ctx.messages.prepare({
      orgId,
      to,
      ...deps.render.code(organization, code, to.value),
      fromName: organization,
      kind: 'email-sign-in-code',
      notAfter: expiresAt,
    });
    const secretDigest = await codeDigest(challengeId, code);
    await ctx.storage.transaction(async (tx) => {
      await store.insert(tx, {
        digest,
        orgId,
        purpose: 'second_factor',
        method: 'otp_via_email',
        handle: to,
        expiresAt,
        status: 'sent',
        personId: person.personId,
        secretDigest,
        requestedIp: rc.clientIp,
        requestedUserAgent: rc.analytics.userAgent,
      });
      await ctx.messages.send(message, { tx });
    });
    return { challenge_id: challengeId, expires_at: new Date(expiresAt).toISOString() };
  }

  /** The hosted login's second step: a code for a person whose first factor it checked. */
  async function sendToPerson(orgId: string, personId: string, rc: RequestContext) {
    await perAddress(orgId, rc);
    return sendFor(orgId, personId, rc, () =>
      EmailCodeErrors.CHALLENGE_REFUSED('the person signing in is no longer active'),
    );
  }

  return { send, sendToPerson };
}
