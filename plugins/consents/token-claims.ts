import { inArray } from 'drizzle-orm';
import { createBatchLoader } from '../../core/batching/batch-loader.ts';
import { batchingFor } from '../../core/batching/group-commit.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { serviceTokenClaims } from '../../core/tokens/service-claims.ts';
import { canonical, isConsentLevel } from './levels.ts';
import { consentsGdpr } from './schema.ts';

type Held = Array<{ orgId: string; level: string }>;

/**
 * The `gdpr_consent_level` claim: the consent levels the person holds when the token is issued (in
 * CONSENT_LEVELS order), absent when it has given none. Issuances that arrive together share one query.
 */
export function consentClaim(storage: Storage) {
  const loader = createBatchLoader<Held>(
    async (personIds) => {
      const rows = await storage.db
        .select({
          personId: consentsGdpr.personId,
          orgId: consentsGdpr.orgId,
          level: consentsGdpr.consentLevel,
        })
        .from(consentsGdpr)
        .where(inArray(consentsGdpr.personId, personIds));
      const found = new Map<string, Held>();
      for (const { personId, ...held } of rows) {
        const list = found.get(personId);
        if (list) list.push(held);
        else found.set(personId, [held]);
      }
      return found;
    },
    { concurrency: batchingFor(storage).concurrency },
  );
  return serviceTokenClaims.attach({
    async run({ orgId, personId }) {
      const held = (await loader.load(personId)) ?? [];
      const levels = canonical(
        held
          .filter((h) => h.orgId === orgId)
          .map((h) => h.level)
          .filter(isConsentLevel),
      );
      return levels.length ? { gdpr_consent_level: levels } : undefined;
    },
  });
}
