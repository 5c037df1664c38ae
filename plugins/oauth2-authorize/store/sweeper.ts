import { and, lt, or, sql } from 'drizzle-orm';
import type { Logger } from '../../../core/log.ts';
import type { Worker } from '../../../core/plugin.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import {
  oauth2AuthorizeCodes,
  oauth2AuthorizeDevices,
  oauth2AuthorizeFamilies,
  oauth2AuthorizeLogins,
  oauth2AuthorizePushedRequests,
  oauth2AuthorizeRefreshTokens,
} from '../schema.ts';

/** Spent and expired rows stay this long past their expiry, so that a late replay is still recognised. */
const KEEP_MS = 3_600_000;

/**
 * Deletes what can no longer be used nor needs recognising: logins, codes (once the access token their
 * exchange issued has expired, and no refresh token of their grant is left: a code replayed while its
 * grant lives still revokes it, RFC 6749 §4.1.2), refresh tokens, and families left with neither tokens
 * nor codes, device authorizations (the grant answers expired_token until then) and pushed requests.
 */
export async function sweep(storage: Storage, now: number): Promise<void> {
  const before = now - KEEP_MS;
  const nowS = Math.floor(now / 1000);
  const c = oauth2AuthorizeCodes;
  await storage.db.delete(oauth2AuthorizeLogins).where(lt(oauth2AuthorizeLogins.expiresAt, before));
  await storage.db.delete(oauth2AuthorizeDevices).where(lt(oauth2AuthorizeDevices.expiresAt, before));
  await storage.db
    .delete(oauth2AuthorizePushedRequests)
    .where(lt(oauth2AuthorizePushedRequests.expiresAt, before));
  // Refresh tokens first: a code goes once its grant has none left.
  await storage.db
    .delete(oauth2AuthorizeRefreshTokens)
    .where(lt(oauth2AuthorizeRefreshTokens.expiresAt, before));
  await storage.db
    .delete(c)
    .where(
      and(
        lt(c.expiresAt, before),
        or(sql`${c.accessExp} is null`, lt(c.accessExp, nowS)),
        sql`not exists (select 1 from ${oauth2AuthorizeRefreshTokens} r where r.family_id = ${c.familyId})`,
      ),
    );
  const f = oauth2AuthorizeFamilies;
  await storage.db
    .delete(f)
    .where(
      and(
        lt(f.createdAt, before),
        sql`not exists (select 1 from ${oauth2AuthorizeRefreshTokens} r where r.family_id = ${f.familyId})`,
        sql`not exists (select 1 from ${c} k where k.family_id = ${f.familyId})`,
      ),
    );
}

/** Sweeps every `intervalMs` (each replica; the deletes are idempotent). */
export function sweeper(deps: { storage: Storage; clock: Clock; log: Logger; intervalMs: number }): Worker {
  let timer: ReturnType<typeof setInterval> | undefined;
  let running: Promise<void> = Promise.resolve();
  return {
    name: 'oauth2-authorize-sweeper',
    start() {
      timer = setInterval(() => {
        running = sweep(deps.storage, deps.clock.now()).catch((error) =>
          deps.log.warn('sweeping expired OAuth rows failed', { error: String(error) }),
        );
      }, deps.intervalMs);
      timer.unref?.();
    },
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
