import { type SQL, sql } from 'drizzle-orm';
import type { Storage } from '../../../core/ports/storage.ts';
import type { oauth2AuthorizeRefreshTokens } from '../schema.ts';

/** Where raw SQL runs: the storage, or a transaction of it. */
type Queries = Pick<Storage, 'query'>;

/**
 * The rows of the families among `ids`, share-locked in family order: a revocation (or a person's
 * deletion) that has changed one of them and not yet committed is waited for, then its outcome is read.
 * Tokens recorded in a family before this read are either seen by the revocation's read of the family's
 * tokens, or see the revocation here. revokeFamilies locks its families in the same order, so the two
 * never wait for each other in a cycle.
 */
const locked = (ids: readonly string[]): SQL => sql`
  select family_id, revoked_at from oauth2_authorize_families
  where family_id in (${sql.join(
    ids.map((id) => sql`${id}`),
    sql`, `,
  )})
  order by family_id for share`;

/** Which of the families are still granted: there (not deleted with their person) and not revoked. */
export async function grantedAmong(db: Queries, familyIds: readonly string[]): Promise<Set<string>> {
  const rows = await db.query<{ family_id: string }>(
    sql`with locked as (${locked([...new Set(familyIds)])})
        select family_id from locked where revoked_at is null`,
  );
  return new Set(rows.map((row) => row.family_id));
}

/**
 * Records refresh-token rows and answers which of their families are still granted, in one statement
 * (one round trip on the refresh path): the families are locked as grantedAmong locks them, so a
 * revocation under way is waited for and seen, and one that starts later waits for this statement's
 * commit and then sees the rows. Each row takes its family's current generation from the table's
 * insert trigger (migration 0002), whichever version of the service inserts it.
 */
export async function recordGranted(
  db: Queries,
  rows: ReadonlyArray<typeof oauth2AuthorizeRefreshTokens.$inferInsert>,
): Promise<Set<string>> {
  const values = rows.map(
    (row) =>
      sql`(${row.tokenHash}, ${row.familyId}, ${row.issuedAt}, ${row.expiresAt}, ${row.spentAt ?? null}, ${row.accessJti}, ${row.accessExp})`,
  );
  const granted = await db.query<{ family_id: string }>(
    sql`with locked as (${locked([...new Set(rows.map((row) => row.familyId))])}),
        recorded as (
          insert into oauth2_authorize_refresh_tokens
            (token_hash, family_id, issued_at, expires_at, spent_at, access_jti, access_exp)
          values ${sql.join(values, sql`, `)}
        )
        select family_id from locked where revoked_at is null`,
  );
  return new Set(granted.map((row) => row.family_id));
}
