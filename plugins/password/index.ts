import { Elysia } from 'elysia';
import { passwordAuthenticator } from '../../core/capabilities/password-authenticator.ts';
import { personDirectory } from '../../core/capabilities/person-directory.ts';
import { signInCompletion } from '../../core/capabilities/sign-in-completion.ts';
import { tokenIssuer } from '../../core/capabilities/token-issuer.ts';
import type { Rate } from '../../core/contract/settings.ts';
import { requestContextReader } from '../../core/http/sign-in-context.ts';
import { definePlugin } from '../../core/plugin.ts';
import { createTokenBuckets } from '../../core/rate-limit/index.ts';
import { revokePersonTokens } from '../../core/tokens/revoke-person-tokens.ts';
import { passwordRoutes } from './api/routes.ts';
import { createHasher } from './hashing/hashing.ts';
import { migrations } from './migrations/index.ts';
import { type PasswordOptions, passwordSettings } from './options.ts';
import { createResetConfirmation } from './reset/confirm.ts';
import { createResetRequests } from './reset/request.ts';
import { resetRoutes } from './reset/routes.ts';
import { createResetSettings, resetSettingsRoutes } from './reset/settings.ts';
import { passwordResetTemplate } from './reset/template.ts';
import { createResetTokens } from './reset/tokens.ts';
import { createPasswordAuthenticator } from './sign-in/authenticator.ts';
import { createSignIn } from './sign-in/sign-in.ts';
import { createCredentialStore } from './store/credentials.ts';
import { passwordCredentialHooks } from './store/listed.ts';
import { deleteCredentialOfDeletedPerson } from './store/person-deleted.ts';

export { PasswordErrors } from './errors.ts';
export type { PasswordOptions };

/**
 * The password factor and anonymous persons: PUT /persons/{id}/credentials/password (argon2id, or an
 * imported argon2id or bcrypt hash rehashed on first use), POST /authenticate/password and POST
 * /persons/anonymous; password reset by email (POST /authenticate/password/reset and /confirm, the
 * hosted page /password/reset, the organization's own reset URL). Requires personDirectory (persons
 * plugin) and tokenIssuer (tokens plugin); provides passwordAuthenticator, the same check for other
 * sign-in surfaces (the OAuth hosted login).
 *
 * @example
 * defineService({ plugins: [persons(), tokens(), password({ argon2: { memoryKiB: 47104, iterations: 1 } })] })
 */
export const password = (options: PasswordOptions = {}) => {
  passwordSettings.checkOptions(options);
  return definePlugin({
    id: 'password',
    migrations,
    settings: passwordSettings.schema,
    requires: { directory: personDirectory, issuer: tokenIssuer },
    declares: [revokePersonTokens],
    provides: { passwordAuthenticator },
    emits: ['PasswordChanged_v1', 'AuthenticationSucceeded_v1', 'AuthenticationFailed_v1'],
    setup(ctx, { directory, issuer }) {
      const s = passwordSettings.resolve(ctx.settings, options);
      const hasher = createHasher({
        memoryKiB: s.PASSWORD_ARGON2_MEMORY_KIB,
        iterations: s.PASSWORD_ARGON2_ITERATIONS,
        parallelism: s.PASSWORD_ARGON2_PARALLELISM,
      });
      const buckets = (name: string, rate: Rate) =>
        createTokenBuckets({
          name: `password-${name}`,
          clock: ctx.clock,
          storage: ctx.storage,
          perMinute: rate.perMinute,
          capacity: rate.burst,
        });
      const credentials = createCredentialStore({ storage: ctx.storage, clock: ctx.clock });
      const ttlMinutes = s.PASSWORD_RESET_TTL_MINUTES;
      const resetTokens = createResetTokens({
        storage: ctx.storage,
        clock: ctx.clock,
        ttlMs: ttlMinutes * 60_000,
      });
      const resetSettings = createResetSettings(ctx.storage, ctx.clock);
      const resetAddressRate = s.PASSWORD_RESET_ADDRESS_RATE_LIMIT;
      const requests = createResetRequests({
        ctx,
        directory,
        tokens: resetTokens,
        settings: resetSettings,
        render: ctx.messages.template(passwordResetTemplate),
        perHandle: buckets('reset-handle', s.PASSWORD_RESET_HANDLE_RATE_LIMIT),
        perAddress: buckets('reset-address', resetAddressRate),
        log: ctx.log.child({ component: 'password-reset' }),
      });
      const confirmation = createResetConfirmation({
        storage: ctx.storage,
        tokens: resetTokens,
        credentials,
        hasher,
        directory,
        events: ctx.events,
        hooks: ctx.hooks,
        clock: ctx.clock,
        revokeTokens: s.PASSWORD_RESET_REVOKE_TOKENS,
      });
      const { signIn, verify, allowed } = createSignIn({
        directory,
        issuer,
        credentials,
        hasher,
        events: ctx.events,
        clock: ctx.clock,
        log: ctx.log.child({ component: 'password' }),
        perHandle: buckets('sign-in-handle', s.PASSWORD_HANDLE_RATE_LIMIT),
        perAddress: buckets('sign-in-address', s.PASSWORD_ADDRESS_RATE_LIMIT),
        completion: () => ctx.capability(signInCompletion),
      });
      const routes = passwordRoutes(ctx, {
        directory,
        issuer,
        credentials,
        hasher,
        signIn,
        resetTokens,
        readContext: requestContextReader(ctx.headers),
        anonymousPerAddress: buckets('anonymous-address', s.ANONYMOUS_RATE_LIMIT),
      });
      const readContext = requestContextReader(ctx.headers);
      return {
        routes: new Elysia()
          .use(routes)
          .use(
            resetRoutes(ctx, {
              requests,
              confirmation,
              readContext,
              confirmPerAddress: buckets('reset-confirm-address', resetAddressRate),
            }),
          )
          .use(resetSettingsRoutes(ctx, resetSettings)),
        workers: [requests.worker],
        provide: { passwordAuthenticator: createPasswordAuthenticator({ directory, verify, allowed }) },
        attach: [deleteCredentialOfDeletedPerson, ...passwordCredentialHooks({ credentials, resetTokens })],
      };
    },
  });
};
