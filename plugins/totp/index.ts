import { personDirectory } from '../../core/capabilities/person-directory.ts';
import { definePlugin } from '../../core/plugin.ts';
import { createEnrolment } from './api/enrolment.ts';
import { totpRoutes } from './api/routes.ts';
import { totpHooks } from './hooks.ts';
import { migrations } from './migrations/index.ts';
import { type TotpOptions, totpSettings } from './options.ts';
import { createTotpStore } from './store/credentials.ts';
import { createSecretSealer, totpSealed } from './store/sealing.ts';
import { createCodeCheck } from './verify/check-code.ts';
import { createAttemptLimits } from './verify/limits.ts';

export { TotpErrors } from './errors.ts';
export type { TotpOptions };

/**
 * The TOTP second factor (RFC 6238, what authenticator apps such as Google Authenticator read):
 * POST /persons/{id}/credentials/totp starts an enrolment (the secret, its otpauth URI and QR code,
 * shown once), POST .../{credential_id}/confirm confirms it with a code and answers ten single-use
 * recovery codes, POST .../{credential_id}/recovery-codes renews them. Secrets are sealed at rest, codes
 * are accepted within one step of drift and once each, recovery codes are stored hashed. Attaches the
 * second step's check for `totp` (checkSecondFactor), the person's credentials (personCredentials,
 * deletePersonCredential) and the person's deletion (beforePersonDeleted). Requires personDirectory.
 *
 * @example defineService({ plugins: [persons(), tokens(), password(), factors(), totp({ enrolmentMinutes: 10 })] })
 */
export const totp = (options: TotpOptions = {}) => {
  totpSettings.checkOptions(options);
  return definePlugin({
    id: 'totp',
    migrations,
    settings: totpSettings.schema,
    requires: { directory: personDirectory },
    setup(ctx, { directory }) {
      const s = totpSettings.resolve(ctx.settings, options);
      const store = createTotpStore({ storage: ctx.storage, clock: ctx.clock });
      const sealer = createSecretSealer(ctx.secrets);
      const limits = createAttemptLimits({
        clock: ctx.clock,
        storage: ctx.storage,
        perPerson: s.TOTP_PERSON_RATE_LIMIT,
        perAddress: s.TOTP_ADDRESS_RATE_LIMIT,
      });
      const enrolment = createEnrolment({
        storage: ctx.storage,
        store,
        sealer,
        directory,
        orgs: ctx.orgs,
        clock: ctx.clock,
        limits,
        ttlMs: s.TOTP_ENROLMENT_MINUTES * 60_000,
      });
      const check = createCodeCheck({ store, sealer, clock: ctx.clock, limits });
      return {
        routes: totpRoutes(ctx, enrolment),
        attach: totpHooks({ store, check, directory, clock: ctx.clock }),
        sealed: [totpSealed],
      };
    },
  });
};
