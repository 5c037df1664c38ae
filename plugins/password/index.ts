import * as v from 'valibot';
import { passwordAuthenticator } from '../../core/capabilities/password-authenticator.ts';
import { personDirectory } from '../../core/capabilities/person-directory.ts';
import { tokenIssuer } from '../../core/capabilities/token-issuer.ts';
import { envInteger, envRate, type Rate } from '../../core/contract/settings.ts';
import { requestContextReader } from '../../core/http/sign-in-context.ts';
import { definePlugin } from '../../core/plugin.ts';
import { createTokenBuckets } from '../../core/rate-limit.ts';
import { createPasswordAuthenticator } from './authenticator.ts';
import { createCredentialStore } from './credentials.ts';
import { type Argon2Params, createHasher, DEFAULT_ARGON2 } from './hashing.ts';
import { migrations } from './migrations/index.ts';
import { deleteCredentialOfDeletedPerson } from './person-deleted.ts';
import { passwordRoutes } from './routes.ts';
import { createSignIn } from './sign-in.ts';

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
}

const settings = v.object({
  PASSWORD_ARGON2_MEMORY_KIB: envInteger('PASSWORD_ARGON2_MEMORY_KIB', { min: 1024, max: 4_194_304 }),
  PASSWORD_ARGON2_ITERATIONS: envInteger('PASSWORD_ARGON2_ITERATIONS', { min: 1, max: 20 }),
  PASSWORD_ARGON2_PARALLELISM: envInteger('PASSWORD_ARGON2_PARALLELISM', { min: 1, max: 16 }),
  PASSWORD_HANDLE_RATE_LIMIT: envRate('PASSWORD_HANDLE_RATE_LIMIT'),
  PASSWORD_ADDRESS_RATE_LIMIT: envRate('PASSWORD_ADDRESS_RATE_LIMIT'),
  ANONYMOUS_RATE_LIMIT: envRate('ANONYMOUS_RATE_LIMIT'),
});

/**
 * The password factor and anonymous persons: PUT /persons/{id}/credentials/password (argon2id, or an
 * imported argon2id or bcrypt hash rehashed on first use), POST /authenticate/password and POST
 * /persons/anonymous. Requires personDirectory (persons plugin) and tokenIssuer (tokens plugin); provides
 * passwordAuthenticator, the same check for other sign-in surfaces (the OAuth hosted login).
 *
 * @example
 * defineService({ plugins: [persons(), tokens(), password({ argon2: { memoryKiB: 47104, iterations: 1 } })] })
 */
export const password = (options: PasswordOptions = {}) =>
  definePlugin({
    id: 'password',
    migrations,
    settings,
    requires: { directory: personDirectory, issuer: tokenIssuer },
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
      const buckets = (rate: Rate) =>
        createTokenBuckets({ clock: ctx.clock, perMinute: rate.perMinute, capacity: rate.burst });
      const credentials = createCredentialStore({ storage: ctx.storage, clock: ctx.clock });
      const { signIn, verify } = createSignIn({
        directory,
        issuer,
        credentials,
        hasher,
        events: ctx.events,
        clock: ctx.clock,
        log: ctx.log.child({ component: 'password' }),
        perHandle: buckets(
          s.PASSWORD_HANDLE_RATE_LIMIT ?? options.handleRateLimit ?? { perMinute: 10, burst: 10 },
        ),
        perAddress: buckets(
          s.PASSWORD_ADDRESS_RATE_LIMIT ?? options.addressRateLimit ?? { perMinute: 60, burst: 100 },
        ),
      });
      const routes = passwordRoutes(ctx, {
        directory,
        issuer,
        credentials,
        hasher,
        signIn,
        readContext: requestContextReader(ctx.headers),
        anonymousPerAddress: buckets(
          s.ANONYMOUS_RATE_LIMIT ?? options.anonymousRateLimit ?? { perMinute: 10, burst: 20 },
        ),
      });
      return {
        routes,
        provide: { passwordAuthenticator: createPasswordAuthenticator({ directory, verify }) },
        attach: [deleteCredentialOfDeletedPerson],
      };
    },
  });
