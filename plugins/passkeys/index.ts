import { Elysia } from 'elysia';
import { hostedLoginPasskeys } from '../../core/capabilities/hosted-login-passkeys.ts';
import { personDirectory } from '../../core/capabilities/person-directory.ts';
import { signInCompletion } from '../../core/capabilities/sign-in-completion.ts';
import { tokenIssuer } from '../../core/capabilities/token-issuer.ts';
import { requestContextReader } from '../../core/http/sign-in-context.ts';
import { definePlugin } from '../../core/plugin.ts';
import { createTokenBuckets } from '../../core/rate-limit/index.ts';
import { registrationRoutes } from './api/registration-routes.ts';
import { signInRoutes } from './api/sign-in-routes.ts';
import { createAssertions } from './ceremony/assertion.ts';
import { createRegistration } from './ceremony/registration.ts';
import { relyingParties } from './ceremony/relying-party.ts';
import { migrations } from './migrations/index.ts';
import { type PasskeyOptions, passkeySettings } from './options.ts';
import { directCompletion } from './sign-in/direct-completion.ts';
import { hostedLoginPasskeysOf } from './sign-in/hosted-login.ts';
import { createSecondFactor } from './sign-in/second-factor.ts';
import { createSignIn } from './sign-in/sign-in.ts';
import { createChallengeStore } from './store/challenges.ts';
import { createPasskeyStore } from './store/credentials.ts';
import { createOfferDeclines } from './store/offer-declines.ts';
import { personHooks } from './store/person-hooks.ts';

export { PasskeyErrors } from './errors.ts';
export type { PasskeyOptions };

/**
 * Passkeys (WebAuthn, with @simplewebauthn/server): registration for a person by the organization
 * (POST /persons/{id}/credentials/webauthn/registration-options and /credentials/webauthn), sign-in
 * with a discoverable passkey (POST /authenticate/webauthn/options and /authenticate/webauthn, ended
 * by `signInCompletion` when the factors plugin provides it: the token or the second step), and a
 * passkey as the second step (POST /authenticate/mfa/webauthn-options and `checkSecondFactor` for
 * `webauthn`). The relying party comes from the organization's policy (`authenticationPolicies`),
 * else from PUBLIC_BASE_URL. Lists and deletes its credentials through `personCredentials` and
 * `deletePersonCredential`. Requires personDirectory (persons plugin) and tokenIssuer (tokens plugin).
 *
 * @example
 * defineService({ plugins: [persons(), tokens(), password(), factors(), passkeys({ userVerification: 'required' })] })
 */
export const passkeys = (options: PasskeyOptions = {}) => {
  passkeySettings.checkOptions(options);
  return definePlugin({
    id: 'passkeys',
    migrations,
    settings: passkeySettings.schema,
    provides: { hostedLoginPasskeys },
    requires: { directory: personDirectory, issuer: tokenIssuer },
    emits: ['AuthenticationSucceeded_v1', 'AuthenticationFailed_v1'],
    setup(ctx, { directory, issuer }) {
      const s = passkeySettings.resolve(ctx.settings, options);
      const ttlMs = s.PASSKEY_CHALLENGE_SECONDS * 1000;
      const perAddress = createTokenBuckets({
        name: 'passkeys-address',
        clock: ctx.clock,
        storage: ctx.storage,
        perMinute: s.PASSKEY_ADDRESS_RATE_LIMIT.perMinute,
        capacity: s.PASSKEY_ADDRESS_RATE_LIMIT.burst,
      });
      const passkeyStore = createPasskeyStore({ storage: ctx.storage, clock: ctx.clock });
      const challenges = createChallengeStore({ storage: ctx.storage, clock: ctx.clock, ttlMs });
      const rps = relyingParties(ctx);
      const ceremony = { challenges, passkeys: passkeyStore, relyingParties: rps, ttlMs };
      const assertions = createAssertions(ceremony);
      const direct = directCompletion({ issuer, events: ctx.events });
      // Read at each request: the factors plugin, when enabled, decides on the second step.
      const completion = () => ctx.capability(signInCompletion);
      const signIn = createSignIn({
        directory,
        assertions,
        relyingParties: rps,
        completion: () => completion() ?? direct,
        events: ctx.events,
        clock: ctx.clock,
        perAddress,
        userVerification: s.PASSKEY_USER_VERIFICATION,
      });
      const secondFactor = createSecondFactor({
        directory,
        assertions,
        passkeys: passkeyStore,
        completion,
        clock: ctx.clock,
        perAddress,
      });
      const registration = createRegistration(ceremony);
      return {
        provide: {
          hostedLoginPasskeys: hostedLoginPasskeysOf({
            directory,
            signIn,
            assertions,
            registration,
            passkeys: passkeyStore,
            userVerification: s.PASSKEY_USER_VERIFICATION,
            offer: s.PASSKEY_HOSTED_LOGIN_OFFER,
            declines: createOfferDeclines({ storage: ctx.storage, clock: ctx.clock }),
          }),
        },
        routes: new Elysia()
          .use(registrationRoutes(ctx, { directory, registration }))
          .use(signInRoutes(ctx, { signIn, secondFactor, readContext: requestContextReader(ctx.headers) })),
        attach: [...personHooks(passkeyStore), secondFactor.attachment],
      };
    },
  });
};
