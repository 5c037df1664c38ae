import { Elysia } from 'elysia';
import { personDirectory } from '../../core/capabilities/person-directory.ts';
import { signInCompletion } from '../../core/capabilities/sign-in-completion.ts';
import { tokenIssuer } from '../../core/capabilities/token-issuer.ts';
import type { Rate } from '../../core/contract/settings.ts';
import { deletePersonCredential, personCredentials } from '../../core/factors/credentials.ts';
import { authenticationPolicies } from '../../core/factors/policy.ts';
import { checkSecondFactor } from '../../core/factors/second-factor.ts';
import { requestContextReader } from '../../core/http/sign-in-context.ts';
import { beforePersonDeleted } from '../../core/persons/before-person-deleted.ts';
import { definePlugin } from '../../core/plugin.ts';
import { createTokenBuckets } from '../../core/rate-limit/index.ts';
import { credentialRoutes } from './credentials/routes.ts';
import { createCompletion } from './mfa/completion.ts';
import { signInEvents } from './mfa/events.ts';
import { mfaRoutes } from './mfa/routes.ts';
import { createSecondStep } from './mfa/second-step.ts';
import { createMfaTokens } from './mfa/tokens.ts';
import { migrations } from './migrations/index.ts';
import { type FactorsOptions, factorsSettings } from './options.ts';
import { policyRoutes } from './policy/routes.ts';
import { createPolicyStore } from './policy/store.ts';

export { FactorsErrors } from './errors.ts';
export type { FactorsOptions };

/**
 * Authentication factors: the organization's policy (GET, PUT /organizations/authentication-policy;
 * provides authenticationPolicies), the end of every first factor's sign-in (provides signInCompletion:
 * the token, or the second step's mfa_token), POST /authenticate/mfa (dispatched to the checkSecondFactor
 * handler of the method's plugin) and a person's credentials (GET /persons/{id}/credentials, DELETE
 * /persons/{id}/credentials/{credential_id}: the union of what personCredentials lists, deleted through
 * deletePersonCredential, the last first factor kept). Requires personDirectory and tokenIssuer.
 *
 * @example defineService({ plugins: [persons(), tokens(), password(), factors()] })
 */
export const factors = (options: FactorsOptions = {}) => {
  factorsSettings.checkOptions(options);
  return definePlugin({
    id: 'factors',
    migrations,
    settings: factorsSettings.schema,
    requires: { directory: personDirectory, issuer: tokenIssuer },
    provides: { authenticationPolicies, signInCompletion },
    declares: [personCredentials, deletePersonCredential, checkSecondFactor],
    emits: ['AuthenticationSucceeded_v1', 'AuthenticationFailed_v1'],
    setup(ctx, { directory, issuer }) {
      const s = factorsSettings.resolve(ctx.settings, options);
      const buckets = (name: string, rate: Rate) =>
        createTokenBuckets({
          name: `factors-${name}`,
          clock: ctx.clock,
          storage: ctx.storage,
          perMinute: rate.perMinute,
          capacity: rate.burst,
        });
      const policies = createPolicyStore({
        storage: ctx.storage,
        clock: ctx.clock,
        publicBaseUrl: ctx.config.publicBaseUrl,
      });
      const tokens = createMfaTokens({
        storage: ctx.storage,
        clock: ctx.clock,
        ttlMs: s.MFA_TOKEN_TTL_SECONDS * 1000,
        maxFailures: s.MFA_TOKEN_MAX_FAILURES,
      });
      const events = signInEvents(ctx.events);
      const { completion, issue } = createCompletion({
        policies,
        directory,
        issuer,
        hooks: ctx.hooks,
        tokens,
        events,
      });
      const complete = createSecondStep({
        policies,
        directory,
        hooks: ctx.hooks,
        tokens,
        events,
        issue,
        perToken: buckets('mfa-token', s.MFA_TOKEN_RATE_LIMIT),
        perAddress: buckets('mfa-address', s.MFA_ADDRESS_RATE_LIMIT),
      });
      return {
        routes: new Elysia()
          .use(policyRoutes(ctx, policies))
          .use(mfaRoutes(ctx, { complete, readContext: requestContextReader(ctx.headers) }))
          .use(credentialRoutes(ctx, { directory, policies })),
        provide: {
          authenticationPolicies: { get: (orgId) => policies.get(orgId) },
          signInCompletion: completion,
        },
        attach: [
          beforePersonDeleted.attach({
            run: ({ orgId, personId, tx }) => tokens.forget(tx, orgId, personId),
          }),
        ],
      };
    },
  });
};
