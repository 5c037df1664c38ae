// Placeholder replaced by the fetch-delivery adapter work.
import type { Logger } from '../../core/log.ts';
import type { HttpDelivery } from '../../core/ports/http-delivery.ts';

export interface FetchDeliveryOptions {
  allowPrivate: string[];
  hostMap: Record<string, string>;
  extraCaPem?: string | undefined;
  log: Logger;
  maxResponseBytes?: number;
}

export function createFetchDelivery(_options: FetchDeliveryOptions): HttpDelivery {
  throw new Error('not implemented');
}
