import { Elysia } from 'elysia';
import { hostedLoginEmailCodes } from '../../core/capabilities/hosted-login-email-codes.ts';
import { personDirectory } from '../../core/capabilities/person-directory.ts';
import { tokenIssuer } from '../../core/capabilities/token-issuer.ts';
import type { Rate } from '../../core/contract/settings.ts';
import { requestContextReader } from '../../core/http/sign-in-context.ts';
import { definePlugin } from '../../core/plugin.ts';
import { createTokenBuckets } from '../../core/rate-limit/index.ts';
import { emailRoutes } from './api/routes.ts';
import { createChallengeStore } from './challenges/store.ts';
import { hostedLoginEmailCodesOf } from './hosted-login.ts';
import { linkRoutes } from './link/routes.ts';
import { migrations } from './migrations/index.ts';
import { type EmailCodeOptions, emailCodeSettings } from './options.ts';
import { deleteChallengesOfDeletedPerson } from './person-deleted.ts';
import { secondFactorCheck } from './second-factor/check.ts';
import { createSecondFactorSender } from './second-factor/send.ts';
import { createCompletion } from './sign-in/complete.ts';
import { messageRenderers } from './sign-in/message.ts';
import { createSignInRequests } from './sign-in/request.ts';
import { createVerification } from './sign-in/verify.ts';

export { EmailCodeErrors } from './errors.ts';
export type { EmailCodeOptions };

/**
 * Sign-in by email: `otp_via_email` (a 6-digit code) and `email_link` (a link whose page asks for a
 * button press), as first factors through POST /authenticate/email and /authenticate/email/verify, and
 * `otp_via_email` as a second factor (POST /authenticate/mfa/email sends the code, `checkSecondFactor`
 * checks it). Messages leave through the messenger (SMTP, or the development outbox). Requires
 * personDirectory (persons plugin) and tokenIssuer (tokens plugin); completes sign-ins through the
 * factors plugin's signInCompletion when it is enabled (the policy and its second step), else issues
 * the token at once. Provides hostedLoginEmailCodes: the hosted login's "Email me a sign-in code" and
 * its second step's code by email, and its "Email me a sign-in link" (links bound to one login).
 *
 * @example
 * defineService({ plugins: [persons(), tokens(), factors(), emailCodes({ ttlMinutes: 10 })] })
 */
export const emailCodes = (options: EmailCodeOptions = {}) => {
  emailCodeSettings.checkOptions(options);
  return definePlugin({
    id: 'email-codes',
    migrations,
    settings: emailCodeSettings.schema,
    requires: { directory: personDirectory, issuer: tokenIssuer },
    provides: { hostedLoginEmailCodes },
    emits: ['AuthenticationSucceeded_v1', 'AuthenticationFailed_v1'],
    setup(ctx, { directory, issuer }) {
      const s = emailCodeSettings.resolve(ctx.settings, options);
      const buckets = (name: string, rate: Rate) =>
        createTokenBuckets({
          name: `email-codes-${name}`,
          clock: ctx.clock,
          storage: ctx.storage,
          perMinute: rate.perMinute,
          capacity: rate.burst,
        });
      const ttlMs = s.EMAIL_CODE_TTL_MINUTES * 60_000;
      const store = createChallengeStore({ storage: ctx.storage, clock: ctx.clock, ttlMs });
      const render = messageRenderers(ctx.messages, ttlMs);
      const readContext = requestContextReader(ctx.headers);
      const completion = createCompletion(ctx, issuer);
      const sendPerHandle = buckets('send-handle', s.EMAIL_SIGN_IN_HANDLE_RATE_LIMIT);
      const sendPerAddress = buckets('send-address', s.EMAIL_SIGN_IN_ADDRESS_RATE_LIMIT);
      const verifyPerHandle = buckets('verify-handle', s.EMAIL_VERIFY_HANDLE_RATE_LIMIT);
      const verifyPerAddress = buckets('verify-address', s.EMAIL_VERIFY_ADDRESS_RATE_LIMIT);
      const requests = createSignInRequests({
        ctx,
        directory,
        store,
        render,
        perHandle: sendPerHandle,
        perAddress: sendPerAddress,
        log: ctx.log.child({ component: 'email-sign-in' }),
      });
      const common = {
        storage: ctx.storage,
        clock: ctx.clock,
        directory,
        store,
        maxAttempts: s.EMAIL_CODE_MAX_ATTEMPTS,
        perHandle: verifyPerHandle,
        perAddress: verifyPerAddress,
      };
      const perPoll = buckets('link-poll', s.EMAIL_LINK_POLL_RATE_LIMIT);
      const verification = createVerification({ ...common, completion, perPoll });
      const sendSecondFactor = createSecondFactorSender({
        ctx,
        directory,
        store,
        render,
        perHandle: sendPerHandle,
        perAddress: sendPerAddress,
      });
      return {
        routes: new Elysia()
          .use(
            emailRoutes(ctx, {
              requests,
              verification,
              sendSecondFactor,
              completion,
              readContext,
              ttlMinutes: s.EMAIL_CODE_TTL_MINUTES,
            }),
          )
          .use(linkRoutes(ctx, { store, readContext, perAddress: verifyPerAddress })),
        provide: {
          hostedLoginEmailCodes: hostedLoginEmailCodesOf({
            requests,
            verification,
            sendSecondFactor,
            completion,
            links: { clock: ctx.clock, store, perAddress: verifyPerAddress, perPoll },
          }),
        },
        workers: [requests.worker],
        attach: [secondFactorCheck(common), deleteChallengesOfDeletedPerson],
      };
    },
  });
};
