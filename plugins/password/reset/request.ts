import type { PersonDirectory, PersonHandle } from '../../../core/capabilities/person-directory.ts';
import { addressBucket } from '../../../core/http/client.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import { uuidv7 } from '../../../core/ids.ts';
import type { Logger } from '../../../core/log.ts';
import type { TemplateRenderer } from '../../../core/messaging/templates.ts';
import type { ServiceContext, Worker } from '../../../core/plugin.ts';
import { ack, type Delivered, drop, type Outcome, type Subscription } from '../../../core/ports/event-bus.ts';
import type { TokenBuckets } from '../../../core/rate-limit/index.ts';
import { PasswordErrors } from '../errors.ts';
import { type ResetSettings, resetLink } from './settings.ts';
import { passwordResetTemplate } from './template.ts';
import { newResetToken, type ResetTokens } from './tokens.ts';

/** The bus topic of accepted reset requests: the work the answer never waits for. */
export const RESET_REQUESTS_TOPIC = 'password-reset-requests';

type ResetRequest = {
  request_id: string;
  org: string;
  handle_type: PersonHandle['type'];
  handle_value: string;
};

export interface ResetRequestDeps {
  ctx: ServiceContext;
  directory: PersonDirectory;
  tokens: ResetTokens;
  settings: ResetSettings;
  render: TemplateRenderer<(typeof passwordResetTemplate.variables)[number]>;
  perHandle: TokenBuckets;
  perAddress: TokenBuckets;
  log: Logger;
}

const tooMany = (retryAfterSeconds: number, what: string) =>
  PasswordErrors.TOO_MANY_ATTEMPTS.with({ headers: { 'retry-after': String(retryAfterSeconds) } })(
    `too many password reset requests ${what}; retry after ${retryAfterSeconds} s`,
  );

/**
 * POST /authenticate/password/reset and its worker. The request does the same for every handle (the
 * rate limits, then one durable publish) and answers 202: whether the handle exists is decided by the
 * worker, so neither the answer nor its time tells. The worker, for a regular, active person holding
 * that email address, issues a token and queues the message in one transaction.
 */
export function createResetRequests(deps: ResetRequestDeps) {
  const { ctx, directory, tokens, settings, log } = deps;
  const hostedPage = `${ctx.config.publicBaseUrl}/password/reset`;
  const ttlMinutes = String(Math.round(tokens.ttlMs / 60_000));

  async function accept(orgId: string, given: PersonHandle, rc: RequestContext): Promise<void> {
    if (rc.clientIp) {
      const take = await deps.perAddress.take(`${orgId}|${addressBucket(rc.clientIp)}`);
      if (!take.ok) throw tooMany(take.retryAfterSeconds, 'from this address');
    }
    const handle = directory.normaliseHandle(given);
    const take = await deps.perHandle.take(`${orgId}|${handle.type}|${handle.value}`);
    if (!take.ok) throw tooMany(take.retryAfterSeconds, 'for this handle');
    const request: ResetRequest = {
      request_id: uuidv7(ctx.clock.now()),
      org: orgId,
      handle_type: handle.type,
      handle_value: handle.value,
    };
    await ctx.bus.publish(RESET_REQUESTS_TOPIC, [{ id: request.request_id, payload: request }]);
  }

  async function handle(msg: Delivered<ResetRequest>): Promise<Outcome> {
    const r = msg.payload;
    if (typeof r?.request_id !== 'string') return drop('not a reset request');
    // Only an email address is sent a link: that is what the transport reaches and what proves the person.
    if (r.handle_type !== 'email_address' || !ctx.messages.reaches('email_address')) return ack();
    const handle: PersonHandle = { type: r.handle_type, value: r.handle_value };
    const person = await directory.findByHandle(r.org, handle);
    if (person?.personType !== 'regular' || !person.active) {
      log.debug('password reset for no active person: nothing sent', { org_id: r.org });
      return ack();
    }
    const org = await ctx.orgs.get(r.org);
    if (!org) return ack();
    const resetUrl = await settings.resetUrl(r.org);
    // Everything that awaits more than the database happens before the transaction.
    const { token, digest } = await newResetToken();
    const expiresAt = tokens.expiresAt();
    const link = resetLink(resetUrl, hostedPage, token);
    const message = await ctx.messages.prepare({
      orgId: r.org,
      to: handle,
      ...deps.render({ organization: org.name, link, expires_minutes: ttlMinutes, handle: handle.value }),
      fromName: org.name,
      link,
      kind: passwordResetTemplate.name,
      notAfter: expiresAt,
    });
    await ctx.storage.transaction(async (tx) => {
      const issued = await tokens.issue(tx, {
        requestId: r.request_id,
        orgId: r.org,
        personId: person.personId,
        handle,
        digest,
        expiresAt,
      });
      // Not issued: this request was handled before (a redelivery), and its message is queued.
      if (issued) await ctx.messages.send(message, { tx });
    });
    return ack();
  }

  let subscription: Subscription | undefined;
  const worker: Worker = {
    name: 'password-reset-requests',
    start() {
      subscription = ctx.bus.consume<ResetRequest>(RESET_REQUESTS_TOPIC, handle, {
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
