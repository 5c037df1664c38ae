/** What became of a message: handed to the transport, retried later, or given up on. */
export type MessageOutcome = 'sent' | 'retried' | 'dropped';

/**
 * Where the message queue counts outcomes, by message kind (the template's name): the seam for the
 * service's metrics, which arrive with the operations work. Until then nothing counts.
 *
 * @example createMessageQueue({ ..., counters: { count: (outcome, kind) => metrics.inc(`messages_${outcome}`, { kind }) } })
 */
export interface MessageCounters {
  count(outcome: MessageOutcome, kind: string): void;
}

export const noCounters: MessageCounters = { count: () => {} };
