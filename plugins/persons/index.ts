import { Elysia } from 'elysia';
import * as v from 'valibot';
import { type PersonDirectory, personDirectory } from '../../core/capabilities/person-directory.ts';
import { envInteger, envRate, envText, type Rate } from '../../core/contract/settings.ts';
import { beforePersonDeleted } from '../../core/persons/before-person-deleted.ts';
import { definePlugin } from '../../core/plugin.ts';
import { createTokenBuckets } from '../../core/rate-limit/index.ts';
import { groupRoutes } from './api/group-routes.ts';
import { REGIONS, type Region } from './api/input.ts';
import { personRoutes } from './api/routes.ts';
import { createDirectory, isRegion } from './directory.ts';
import { migrations } from './migrations/index.ts';
import { createSettingsStore, settingsRoutes } from './settings.ts';
import { createPersonLookup } from './store/lookup.ts';
import { createPersonStore } from './store/persons.ts';
import { verificationRoutes } from './verification/routes.ts';
import { emailVerificationTemplate } from './verification/template.ts';
import { createVerificationTokens } from './verification/tokens.ts';

export { type PersonDirectory, personDirectory };

export interface PersonsOptions {
  /** The region of persons created without one; PERSONS_DEFAULT_REGION wins over it. @default 'us-iowa' */
  defaultRegion?: Region;
  /** How long an email verification link works, in hours (1 to 720). @default 24 */
  verificationHours?: number;
  /** Verification links per person. @default { perMinute: 2, burst: 5 } */
  verificationRateLimit?: Rate;
}

const settings = v.object({
  PERSONS_DEFAULT_REGION: envText('PERSONS_DEFAULT_REGION', `must be one of ${REGIONS.join(', ')}`, isRegion),
  EMAIL_VERIFICATION_TTL_HOURS: envInteger('EMAIL_VERIFICATION_TTL_HOURS', { min: 1, max: 720 }),
  EMAIL_VERIFICATION_RATE_LIMIT: envRate('EMAIL_VERIFICATION_RATE_LIMIT'),
});

/**
 * Persons of an organization: handles (normalised, unique per organization, email addresses verified by
 * a link), groups, the organization's groups_claim_name, and the personDirectory capability the token
 * issuer and the factors use.
 *
 * @example defineService({ plugins: [persons({ defaultRegion: 'europe-belgium' })] })
 */
export const persons = (options: PersonsOptions = {}) => {
  const optionRegion = options.defaultRegion ?? 'us-iowa';
  if (!isRegion(optionRegion))
    throw new Error(`persons: defaultRegion must be one of ${REGIONS.join(', ')} (got ${optionRegion})`);
  const hours = options.verificationHours ?? 24;
  if (!Number.isInteger(hours) || hours < 1 || hours > 720)
    throw new Error(`persons: verificationHours must be an integer from 1 to 720 (got ${hours})`);
  return definePlugin({
    id: 'persons',
    migrations,
    settings,
    provides: { personDirectory },
    declares: [beforePersonDeleted],
    emits: ['PersonCreated_v1', 'PersonDeleted_v1', 'AnonymousPersonCreated_v1'],
    setup(ctx) {
      const region = ctx.settings.PERSONS_DEFAULT_REGION;
      const defaultRegion: Region = region && isRegion(region) ? region : optionRegion;
      const store = createPersonStore({
        storage: ctx.storage,
        clock: ctx.clock,
        events: ctx.events,
        beforeDelete: (deletion) => ctx.hooks.run(beforePersonDeleted, deletion),
      });
      const orgSettings = createSettingsStore(ctx.storage, ctx.clock);
      const lookup = createPersonLookup(ctx.storage);
      const directory = createDirectory({
        store,
        lookup,
        settings: orgSettings,
        clock: ctx.clock,
        defaultRegion,
      });
      const rate = ctx.settings.EMAIL_VERIFICATION_RATE_LIMIT ??
        options.verificationRateLimit ?? { perMinute: 2, burst: 5 };
      const verification = verificationRoutes(ctx, {
        store,
        tokens: createVerificationTokens({
          storage: ctx.storage,
          clock: ctx.clock,
          ttlMs: (ctx.settings.EMAIL_VERIFICATION_TTL_HOURS ?? hours) * 3_600_000,
        }),
        render: ctx.messages.template(emailVerificationTemplate),
        perPerson: createTokenBuckets({
          name: 'persons-verification',
          clock: ctx.clock,
          storage: ctx.storage,
          perMinute: rate.perMinute,
          capacity: rate.burst,
        }),
      });
      return {
        routes: new Elysia()
          .use(personRoutes(ctx, store, defaultRegion))
          .use(verification)
          .use(groupRoutes(ctx, store))
          .use(settingsRoutes(ctx, orgSettings)),
        provide: { personDirectory: directory },
      };
    },
  });
};
