import { Elysia } from 'elysia';
import * as v from 'valibot';
import { passwordAuthenticator } from '../../core/capabilities/password-authenticator.ts';
import { personDirectory } from '../../core/capabilities/person-directory.ts';
import { tokenIssuer } from '../../core/capabilities/token-issuer.ts';
import { envInteger, envRate, envText, type Rate } from '../../core/contract/settings.ts';
import { requestContextReader } from '../../core/http/sign-in-context.ts';
import { definePlugin } from '../../core/plugin.ts';
import { createTokenBuckets } from '../../core/rate-limit/index.ts';
import { revokePersonTokens } from '../../core/tokens/revoke-person-tokens.ts';
import { passwordRoutes } from './api/routes.ts';
import { type Argon2Params, createHasher, DEFAULT_ARGON2 } from './hashing/hashing.ts';
import { migrations } from './migrations/index.ts';
import { createResetConfirmation } from './reset/confirm.ts';
import { createResetRequests } from './reset/request.ts';
import { resetRoutes } from './reset/routes.ts';
import { createResetSettings, resetSettingsRoutes } from './reset/settings.ts';
import { passwordResetTemplate } from './reset/template.ts';
import { createResetTokens } from './reset/tokens.ts';
import { createPasswordAuthenticator } from './sign-in/authenticator.ts';
import { createSignIn } from './sign-in/sign-in.ts';
import { createCredentialStore } from './store/credentials.ts';
import { deleteCredentialOfDeletedPerson } from './store/person-deleted.ts';

export { PasswordErrors } from './errors.ts';

/** Options of the password plugin; each has an environment variable that overrides it. */
export interface PasswordOptions {
  /** argon2id cost. @default { memoryKiB: 19456, iterations: 2, parallelism: 1 } */
  argon2?: Partial<Argon2Params>;
  /** Sign-in attempts per handle (and organization). @default { perMinute: 10, burst: 10 } */
  handleRateLimit?: Rate;
  /** Sign-in attempts per client address (and organization). @default { perMinute: 60, burst: 100 } */
  addressRateLimit?: Rate;
  /** Anonymous persons per client address (and organization). @default { perMinute: 10, burst: 20 } */
  anonymousRateLimit?: Rate;
  /** How long a reset link works, in minutes (1 to 1440). @default 15 */
  resetTokenMinutes?: number;
  /** Revoke the person's earlier tokens when a reset link sets the password. @default true */
  revokeTokensOnReset?: boolean;
  /** Reset requests per handle (and organization). @default { perMinute: 2, burst: 3 } */
  resetHandleRateLimit?: Rate;
  /** Reset requests, and confirmations, per client address. @default { perMinute: 20, burst: 30 } */
  resetAddressRateLimit?: Rate;
}

const settings = v.object({
  PASSWORD_ARGON2_MEMORY_KIB: envInteger('PASSWORD_ARGON2_MEMORY_KIB', { min: 1024, max: 4_194_304 }),
  PASSWORD_ARGON2_ITERATIONS: envInteger('PASSWORD_ARGON2_ITERATIONS', { min: 1, max: 20 }),
  PASSWORD_ARGON2_PARALLELISM: envInteger('PASSWORD_ARGON2_PARALLELISM', { min: 1, max: 16 }),
  PASSWORD_HANDLE_RATE_LIMIT: envRate('PASSWORD_HANDLE_RATE_LIMIT'),
  PASSWORD_ADDRESS_RATE_LIMIT: envRate('PASSWORD_ADDRESS_RATE_LIMIT'),
  ANONYMOUS_RATE_LIMIT: envRate('ANONYMOUS_RATE_LIMIT'),
  PASSWORD_RESET_TTL_MINUTES: envInteger('PASSWORD_RESET_TTL_MINUTES', { min: 1, max: 1440 }),
  PASSWORD_RESET_REVOKE_TOKENS: envText('PASSWORD_RESET_REVOKE_TOKENS', 'must be true or false', (s) =>
    ['true', 'false'].includes(s),
  ),
  PASSWORD_RESET_HANDLE_RATE_LIMIT: envRate('PASSWORD_RESET_HANDLE_RATE_LIMIT'),
  PASSWORD_RESET_ADDRESS_RATE_LIMIT: envRate('PASSWORD_RESET_ADDRESS_RATE_LIMIT'),
});

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
  const minutes = options.resetTokenMinutes ?? 15;
  if (!Number.isInteger(minutes) || minutes < 1 || minutes > 1440)
    throw new Error(`password: resetTokenMinutes must be an integer from 1 to 1440 (got ${minutes})`);
  return definePlugin({
    id: 'password',
    migrations,
    settings,
    requires: { directory: personDirectory, issuer: tokenIssuer },
    declares: [revokePersonTokens],
    provides: { passwordAuthenticator },
    emits: ['PasswordChanged_v1', 'AuthenticationSucceeded_v1', 'AuthenticationFailed_v1'],
    setup(ctx, { directory, issuer }) {
      const s = ctx.settings;
      const hasher = createHasher({
        memoryKiB: s.PASSWORD_ARGON2_MEMORY_KIB ?? options.argon2?.memoryKiB ?? DEFAULT_ARGON2.memoryKiB,
        iterations: s.PASSWORD_ARGON2_ITERATIONS ?? options.argon2?.iterations ?? DEFAULT_ARGON2.iterations,
        parallelism:
          s.PASSWORD_ARGON2_PARALLELISM ?? options.argon2?.parallelism ?? DEFAULT_ARGON2.parallelism,
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
      const ttlMinutes = s.PASSWORD_RESET_TTL_MINUTES ?? minutes;
      const resetTokens = createResetTokens({
        storage: ctx.storage,
        clock: ctx.clock,
        ttlMs: ttlMinutes * 60_000,
      });
      const resetSettings = createResetSettings(ctx.storage, ctx.clock);
      const resetAddressRate = s.PASSWORD_RESET_ADDRESS_RATE_LIMIT ??
        options.resetAddressRateLimit ?? { perMinute: 20, burst: 30 };
      const requests = createResetRequests({
        ctx,
        directory,
        tokens: resetTokens,
        settings: resetSettings,
        render: ctx.messages.template(passwordResetTemplate),
        perHandle: buckets(
          'reset-handle',
          s.PASSWORD_RESET_HANDLE_RATE_LIMIT ?? options.resetHandleRateLimit ?? { perMinute: 2, burst: 3 },
        ),
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
        revokeTokens:
          s.PASSWORD_RESET_REVOKE_TOKENS !== undefined
            ? s.PASSWORD_RESET_REVOKE_TOKENS === 'true'
            : (options.revokeTokensOnReset ?? true),
      });
      const { signIn, verify } = createSignIn({
        directory,
        issuer,
        credentials,
        hasher,
        events: ctx.events,
        clock: ctx.clock,
        log: ctx.log.child({ component: 'password' }),
        perHandle: buckets(
          'sign-in-handle',
          s.PASSWORD_HANDLE_RATE_LIMIT ?? options.handleRateLimit ?? { perMinute: 10, burst: 10 },
        ),
        perAddress: buckets(
          'sign-in-address',
          s.PASSWORD_ADDRESS_RATE_LIMIT ?? options.addressRateLimit ?? { perMinute: 60, burst: 100 },
        ),
      });
      const routes = passwordRoutes(ctx, {
        directory,
        issuer,
        credentials,
        hasher,
        signIn,
        resetTokens,
        readContext: requestContextReader(ctx.headers),
        anonymousPerAddress: buckets(
          'anonymous-address',
          s.ANONYMOUS_RATE_LIMIT ?? options.anonymousRateLimit ?? { perMinute: 10, burst: 20 },
        ),
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
        provide: { passwordAuthenticator: createPasswordAuthenticator({ directory, verify }) },
        attach: [deleteCredentialOfDeletedPerson],
      };
    },
  });
};
