import type { CustomHeaders } from '../store/custom-headers.ts';
import type { WebhookRow } from '../store/webhooks.ts';
import { formatDuration } from './duration.ts';

/** A webhook as the API shows it: `timeout` "0s" when unset, `custom_headers` only when set. */
export function webhookJson(row: WebhookRow, headers: CustomHeaders | undefined) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    target_url: row.targetUrl,
    ...(headers ? { custom_headers: headers } : {}),
    timeout: formatDuration(row.timeoutNs ?? 0),
  };
}

/** Clock milliseconds as RFC 3339 UTC. */
export const isoOf = (ms: number | string | null | undefined): string | undefined =>
  ms === null || ms === undefined ? undefined : new Date(Number(ms)).toISOString();
