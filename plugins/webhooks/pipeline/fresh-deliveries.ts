import type { DeliveryToAttempt } from './loader.ts';

/**
 * Deliveries the router of this process has just committed, each with its webhook as the router read
 * it, for their first attempt: most are handed to this process's delivery consumer moments later (the
 * local hand-off), which then starts without reading back the rows it has just written. Taken once, and
 * only for a message's first attempt: a retry, or a message redelivered after a crash, reads the
 * database. Bounded: the oldest entries go first (deliveries another replica took are never asked for).
 *
 * @example
 * router: tx.afterCommit(() => fresh.put(delivery));
 * handler: const d = fresh.take(id) ?? (await loadFromDatabase(id));
 */
export function createFreshDeliveries(limit = 4096) {
  const entries = new Map<string, DeliveryToAttempt>();
  return {
    put(d: DeliveryToAttempt): void {
      if (entries.size >= limit) entries.delete(entries.keys().next().value!);
      entries.set(d.id, d);
    },
    /** The delivery, once: a second take answers undefined. */
    take(id: string): DeliveryToAttempt | undefined {
      const d = entries.get(id);
      if (d) entries.delete(id);
      return d;
    },
  };
}

export type FreshDeliveries = ReturnType<typeof createFreshDeliveries>;
