import { createBatchLoader } from '../../../core/batching/batch-loader.ts';
import { batchingFor } from '../../../core/batching/group-commit.ts';
import { prepared } from '../../../core/db/prepared.ts';
import type { Storage } from '../../../core/ports/storage.ts';

/** A webhook to call for a synchronous hook. */
export interface HookTarget {
  id: string;
  targetUrl: string;
  /** Sealed JSON, as stored. */
  customHeaders: string | null;
  timeoutNs: number | null;
}

// Served by webhook_triggers_lookup_idx (org_id, trigger_type, trigger_name, webhook_id), then the
// webhooks' primary key. Creation order: the order their claims are merged in.
const selectTargets = prepared<{
  org_id: string;
  id: string;
  target_url: string;
  custom_headers: string | null;
  timeout_ns: string | number | null;
}>(
  'webhooks_sync_hook_targets',
  `select w.org_id, w.id, w.target_url, w.custom_headers, w.timeout_ns
   from webhook_triggers t join webhooks w on w.id = t.webhook_id
   where t.org_id = any($1::uuid[]) and t.trigger_type = 'sync_hook' and t.trigger_name = $2
   order by w.created_at, w.id`,
);

/**
 * The webhooks of an organization with a given sync_hook trigger, in creation order. No cache: a
 * trigger added or removed a moment ago counts at the next sign-in, on every replica. Lookups that
 * arrive together share one query (a burst of sign-ins costs one round trip).
 */
export function createHookTargets(storage: Storage, triggerName: string) {
  const loader = createBatchLoader<HookTarget[]>(
    async (orgIds) => {
      const rows = await selectTargets(storage.db, `{${orgIds.join(',')}}`, triggerName);
      const out = new Map<string, HookTarget[]>();
      for (const r of rows) {
        const target: HookTarget = {
          id: r.id,
          targetUrl: r.target_url,
          customHeaders: r.custom_headers,
          timeoutNs: r.timeout_ns === null ? null : Number(r.timeout_ns),
        };
        const list = out.get(r.org_id);
        if (list) list.push(target);
        else out.set(r.org_id, [target]);
      }
      return out;
    },
    { concurrency: batchingFor(storage).concurrency },
  );
  return {
    /** The organization's webhooks for this hook; empty when it has none. */
    of: async (orgId: string): Promise<HookTarget[]> => (await loader.load(orgId)) ?? [],
  };
}
