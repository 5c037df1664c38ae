import { batchGate } from '../../../core/batching/batch-gate.ts';
import { createBatchLoader } from '../../../core/batching/batch-loader.ts';
import { batchingFor } from '../../../core/batching/group-commit.ts';
import type { PersonHandle, PersonRecord } from '../../../core/capabilities/person-directory.ts';
import { prepared } from '../../../core/db/prepared.ts';
import { isUuid } from '../../../core/ids.ts';
import type { Storage, Transaction } from '../../../core/ports/storage.ts';

interface Row {
  person_id: string;
  org_id: string;
  person_type: string;
  active: boolean;
  region: string;
  created_ms: number | string;
  /** `[[type, value, verified], ...]` in the order they were added (json, or its text on some drivers). */
  handles: [string, string, boolean][] | string;
  /** Group names in name order. */
  groups: string[] | string;
}

// The person with its handles and groups in one statement. Handles come in the order they were added
// (their rows are never updated, so ctid order is insertion order), as the routes' reads give them.
const COLUMNS = `p.person_id, p.org_id, p.person_type, p.active, p.region,
  (extract(epoch from p.created_at) * 1000)::float8 as created_ms,
  coalesce((select json_agg(json_build_array(h.type, h.value, h.verified) order by h.ctid)
            from persons_handles h where h.person_id = p.person_id), '[]'::json) as handles,
  coalesce((select json_agg(m.group_name order by m.group_name)
            from persons_group_memberships m where m.person_id = p.person_id), '[]'::json) as groups`;

// Unnamed (planned for its values each time): persons is a table that can grow by thousands of rows
// in a deployment's first minutes, and a generic plan made while it was nearly empty would scan it
// whole until it is next analysed (see core/db/prepared.ts). Batching amortises the parse: under load
// one statement answers every lookup of the moment, and its text never changes.
const selectByIds = prepared<Row>(
  null,
  `select ${COLUMNS} from persons p where p.person_id = any($1::uuid[])`,
);
const selectByHandle = prepared<Row>(
  null,
  `select ${COLUMNS} from persons p
   where p.person_id = (select person_id from persons_handles where org_id = $1 and type = $2 and value = $3)`,
);

const json = <T>(v: T | string): T => (typeof v === 'string' ? (JSON.parse(v) as T) : v);

function recordOf(r: Row): PersonRecord {
  return {
    personId: r.person_id,
    orgId: r.org_id,
    personType: r.person_type === 'anonymous' ? 'anonymous' : 'regular',
    active: r.active,
    region: r.region,
    handles: json(r.handles).map(([type, value, verified]) => ({
      type: type as PersonHandle['type'],
      value,
      verified: verified === true,
    })),
    groups: json(r.groups),
    createdAt: new Date(Number(r.created_ms)).toISOString(),
  };
}

/**
 * The personDirectory's reads: a person with its handles and groups in one statement, and lookups that
 * arrive together (a burst of token issuances) answered by one `person_id = any(...)` query. Nothing is
 * cached: a person deleted, disabled or regrouped a moment ago is read as it is now.
 */
export function createPersonLookup(storage: Storage) {
  const byId = createBatchLoader<PersonRecord>(
    async (ids) => {
      const rows = await selectByIds(storage.db, `{${ids.join(',')}}`);
      return new Map(rows.map((r) => [r.person_id, recordOf(r)]));
    },
    { concurrency: batchingFor(storage).concurrency },
  );
  const gate = batchGate(storage);
  return {
    /** The person of this organization, or undefined (also for an ID that is no UUID). */
    async get(orgId: string, personId: string, tx?: Transaction): Promise<PersonRecord | undefined> {
      if (!isUuid(personId)) return undefined;
      // Keys are lower case so that two spellings of one ID share a lookup; the row answers in lower case.
      const id = personId.toLowerCase();
      let person: PersonRecord | undefined;
      if (tx) {
        // In the caller's transaction: never batched with lookups outside it.
        const [row] = await selectByIds(tx.db, `{${id}}`);
        person = row && recordOf(row);
      } else {
        await gate();
        person = await byId.load(id);
      }
      return person?.orgId === orgId.toLowerCase() ? person : undefined;
    },
    /** The person holding a normalised handle in this organization, or undefined. */
    async findByHandle(orgId: string, handle: PersonHandle): Promise<PersonRecord | undefined> {
      const [row] = await selectByHandle(storage.db, orgId, handle.type, handle.value);
      return row && recordOf(row);
    },
  };
}
