import { personDirectory } from '../../core/capabilities/person-directory.ts';
import { beforePersonDeleted } from '../../core/persons/before-person-deleted.ts';
import { definePlugin } from '../../core/plugin.ts';
import { consentRoutes } from './api/routes.ts';
import { migrations } from './migrations/index.ts';
import { createConsentStore, forgetPerson } from './store/consents.ts';
import { consentClaim } from './token-claims.ts';

export { ConsentErrors } from './errors.ts';
export { CONSENT_LEVELS, type ConsentLevel } from './levels.ts';

/**
 * GDPR consents of persons: GET, PUT and DELETE /persons/{id}/consent/gdpr, GdprConsentsChanged_v1 on
 * every change, and the levels in identity tokens issued afterwards (`gdpr_consent_level`). A plugin of
 * its own rather than part of persons: a deployment that records consent elsewhere leaves it out, and it
 * reaches persons and tokens only through the capability and hook points every plugin uses.
 * Requires personDirectory (the persons plugin).
 *
 * @example defineService({ plugins: [persons(), tokens(), consents()] })
 */
export const consents = () =>
  definePlugin({
    id: 'consents',
    migrations,
    requires: { persons: personDirectory },
    emits: ['GdprConsentsChanged_v1'],
    setup(ctx, { persons }) {
      const store = createConsentStore({
        storage: ctx.storage,
        clock: ctx.clock,
        events: ctx.events,
        persons,
      });
      return {
        routes: consentRoutes(ctx, store),
        attach: [
          consentClaim(ctx.storage),
          beforePersonDeleted.attach({ run: ({ orgId, personId, tx }) => forgetPerson(tx, orgId, personId) }),
        ],
      };
    },
  });
