import type { PersonDirectory, PersonHandle } from '../../../core/capabilities/person-directory.ts';
import { addressBucket } from '../../../core/http/client.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import type { Logger } from '../../../core/log.ts';
import type { PreparedMessage } from '../../../core/messaging/queue.ts';
import type { ServiceContext, Worker } from '../../../core/plugin.ts';
import { ack, type Delivered, drop, type Outcome, type Subscription } from '../../../core/ports/event-bus.ts';
import type { TokenBuckets } from '../../../core/rate-limit/index.ts';
import {
  challengeDigest,
  codeDigest,
  newChallengeId,
  newLinkToken,
  sixDigitCode,
} from '../challenges/secrets.ts';
import type { ChallengeStore } from '../challenges/store.ts';
import { EmailCodeErrors } from '../errors.ts';
import type { EmailMethod } from '../schema.ts';
import type { MessageRenderers } from './message.ts';

/** The bus topic of accepted sign-in requests: the work the answer never waits for. */
export const EMAIL_SIGN_IN_TOPIC = 'email-sign-in-requests';

/**
 * What the worker needs, sealed: the challenge ID is the caller's key to the sign-in; `link_url` the page
 * a hosted login's link leads to (else the API's /email/sign-in).
 */
type Sealed = { challenge_id: string; method: EmailMethod; link_url?: string };

/** A link a hosted login asks for: bound to its login, leading to its own page. */
export interface LinkBinding {
  /** The hosted login's key for its login (the digest of the login's ID): only it may use the link. */
  binding: string;
  /** The page the link leads to (`?token=` is added). */
  linkUrl: string;
}
type SignInRequest = { digest: string; org: string; sealed: string };

const sealContext = (digest: string) => `email-sign-in:${digest}`;

export interface SignInRequestDeps {
  ctx: ServiceContext;
  directory: PersonDirectory;
  store: ChallengeStore;
  render: MessageRenderers;
  perHandle: TokenBuckets;
  perAddress: TokenBuckets;
  log: Logger;
}

export const tooMany = (retryAfterSeconds: number, what: string) =>
  EmailCodeErrors.TOO_MANY_ATTEMPTS.with({ headers: { 'retry-after': String(retryAfterSeconds) } })(
    `${what}; retry after ${retryAfterSeconds} s`,
  );

/**
 * POST /authenticate/email and its worker. The request does the same for every handle (the limits, one
 * transaction that stores the challenge and publishes the request) and answers 202 with the challenge:
 * whether the handle names a person is decided by the worker, so neither the answer nor its time tells.
 * The worker, for a regular, active person holding that email address, makes the code or the link,
 * marks the challenge sent and queues the message, in one transaction.
 */
export function createSignInRequests(deps: SignInRequestDeps) {
  const { ctx, directory, store, log } = deps;
  const linkPage = `${ctx.config.publicBaseUrl}/email/sign-in`;

  async function accept(
    orgId: string,
    given: PersonHandle,
    method: EmailMethod,
    rc: RequestContext,
    bound?: LinkBinding,
  ): Promise<{ challenge_id: string; expires_at: string }> {
    if (given.type !== 'email_address')
      throw EmailCodeErrors.INVALID_BODY(
        `handle.type: must be email_address for ${method} (codes and links are sent by email)`,
      );
    if (rc.clientIp) {
      const take = await deps.perAddress.take(`${orgId}|${addressBucket(rc.clientIp)}`);
      if (!take.ok)
        throw tooMany(take.retryAfterSeconds, 'too many sign-in messages asked for from this address');
    }
    const handle = directory.normaliseHandle(given);
    const take = await deps.perHandle.take(`${orgId}|${handle.type}|${handle.value}`);
    if (!take.ok) throw tooMany(take.retryAfterSeconds, 'too many sign-in messages for this handle');
    const challengeId = newChallengeId();
    const digest = await challengeDigest(challengeId);
    const expiresAt = store.expiresAt();
    const sealed = await ctx.secrets.seal(
      JSON.stringify({
        challenge_id: challengeId,
        method,
        ...(bound ? { link_url: bound.linkUrl } : {}),
      } satisfies Sealed),
      sealContext(digest),
    );
    const request: SignInRequest = { digest, org: orgId, sealed };
    await ctx.storage.transaction(async (tx) => {
      await store.insert(tx, {
        digest,
        orgId,
        purpose: 'sign_in',
        method,
        handle,
        expiresAt,
        status: 'requested',
        requestedIp: rc.clientIp,
        requestedUserAgent: rc.analytics.userAgent,
        boundTo: bound?.binding,
      });
      await ctx.bus.publish(EMAIL_SIGN_IN_TOPIC, [{ id: digest, payload: request }], { tx });
    });
    return { challenge_id: challengeId, expires_at: new Date(expiresAt).toISOString() };
  }

  async function handle(msg: Delivered<SignInRequest>): Promise<Outcome> {
    const r = msg.payload;
    if (typeof r?.digest !== 'string' || typeof r.sealed !== 'string')
      return drop('not an email sign-in request');
    let opened: Sealed;
    try {
      opened = JSON.parse(await ctx.secrets.open(r.sealed, sealContext(r.digest)));
    } catch (err) {
      log.error('email sign-in request dropped: it does not open with the master keys', {
        org_id: r.org,
        err,
      });
      return drop('the sealed request does not open');
    }
    const challenge = await store.find(r.org, r.digest);
    // Sent already (a redelivery), or expired before its turn came: nothing to do.
    if (challenge?.status !== 'requested' || challenge.expiresAt <= ctx.clock.now()) return ack();
    if (!ctx.messages.reaches('email_address')) return ack();
    const person = await directory.findByHandle(r.org, challenge.handle);
    if (person?.personType !== 'regular' || !person.active) {
      log.debug('email sign-in for no active person: nothing sent', { org_id: r.org });
      return ack();
    }
    const org = await ctx.orgs.get(r.org);
    if (!org) return ack();
    // Everything that awaits more than the database happens before the transaction.
    const common = { orgId: r.org, to: challenge.handle, fromName: org.name, notAfter: challenge.expiresAt };
    let secret: string;
    let message: PreparedMessage;
    if (opened.method === 'otp_via_email') {
      const code = sixDigitCode();
      secret = await codeDigest(opened.challenge_id, code);
      message = await ctx.messages.prepare({
        ...common,
        ...deps.render.code(org.name, code, challenge.handle.value),
        kind: 'email-sign-in-code',
      });
    } else {
      const made = await newLinkToken();
      const link = `${opened.link_url ?? linkPage}?token=${made.token}`;
      secret = made.digest;
      message = await ctx.messages.prepare({
        ...common,
        ...deps.render.link(org.name, link, challenge.handle.value),
        link,
        kind: 'email-sign-in-link',
      });
    }
    await ctx.storage.transaction(async (tx) => {
      if (await store.markSent(tx, r.digest, person.personId, secret))
        await ctx.messages.send(message, { tx });
    });
    return ack();
  }

  let subscription: Subscription | undefined;
  const worker: Worker = {
    name: 'email-sign-in-requests',
    start() {
      subscription = ctx.bus.consume<SignInRequest>(EMAIL_SIGN_IN_TOPIC, handle, {
        concurrency: 16,
        leaseMs: 30_000 * ctx.clock.rate,
      });
    },
    async stop() {
      await subscription?.stop();
      subscription = undefined;
    },
  };

  return { accept, handle, worker };
}
