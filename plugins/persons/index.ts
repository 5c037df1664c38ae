import { Elysia } from 'elysia';
import { type PersonDirectory, personDirectory } from '../../core/capabilities/person-directory.ts';
import { beforePersonDeleted } from '../../core/persons/before-person-deleted.ts';
import { personDisabled } from '../../core/persons/person-disabled.ts';
import { definePlugin } from '../../core/plugin.ts';
import { createTokenBuckets } from '../../core/rate-limit/index.ts';
import { groupRoutes } from './api/group-routes.ts';
import { personRoutes } from './api/routes.ts';
import { createDirectory } from './directory.ts';
import { migrations } from './migrations/index.ts';
import { type PersonsOptions, personsSettings } from './options.ts';
import { createSettingsStore, settingsRoutes } from './settings.ts';
import { createPersonLookup } from './store/lookup.ts';
import { createPersonStore } from './store/persons.ts';
import { verificationRoutes } from './verification/routes.ts';
import { emailVerificationTemplate } from './verification/template.ts';
import { createVerificationTokens } from './verification/tokens.ts';

export type { PersonsOptions };
export { type PersonDirectory, personDirectory };

/**
 * Persons of an organization: handles (normalised, unique per organization, email addresses verified by
 * a link), groups, the organization's groups_claim_name, and the personDirectory capability the token
 * issuer and the factors use.
 *
 * @example defineService({ plugins: [persons({ defaultRegion: 'europe-belgium' })] })
 */
export const persons = (options: PersonsOptions = {}) => {
  personsSettings.checkOptions(options);
  return definePlugin({
    id: 'persons',
    migrations,
    settings: personsSettings.schema,
    provides: { personDirectory },
    declares: [beforePersonDeleted, personDisabled],
    emits: ['PersonCreated_v1', 'PersonDeleted_v1', 'AnonymousPersonCreated_v1'],
    setup(ctx) {
      const s = personsSettings.resolve(ctx.settings, options);
      const defaultRegion = s.PERSONS_DEFAULT_REGION;
      const store = createPersonStore({
        storage: ctx.storage,
        clock: ctx.clock,
        events: ctx.events,
        beforeDelete: (deletion) => ctx.hooks.run(beforePersonDeleted, deletion),
        onDisabled: (disabling) => ctx.hooks.run(personDisabled, disabling),
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
      const rate = s.EMAIL_VERIFICATION_RATE_LIMIT;
      const verification = verificationRoutes(ctx, {
        store,
        tokens: createVerificationTokens({
          storage: ctx.storage,
          clock: ctx.clock,
          ttlMs: s.EMAIL_VERIFICATION_TTL_HOURS * 3_600_000,
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
