import { ACCEPTED_TRIGGER_NAMES, acceptedTriggerName } from '../../../core/events/index.ts';
import { WebhookErrors } from '../errors.ts';
import type { TriggerRef } from '../store/webhooks.ts';

/** The only synchronous hook (spec, Trigger). */
export const SYNC_HOOK_NAMES = ['token_minted'] as const;

/**
 * The canonical form of a trigger, or a 400 that lists what is accepted. Event trigger names are the
 * spec's accepted list (`MitmAttackDetectedV1` and `MitmAttackDetected_v1` are one trigger, stored as
 * the catalogue's `MitmAttackDetected_v1`); cloud-provider and unknown names are refused.
 */
export function canonicalTrigger(triggerType: string, triggerName: string, where = 'body'): TriggerRef {
  if (triggerType === 'event') {
    const name = acceptedTriggerName(triggerName);
    if (!name)
      throw WebhookErrors.INVALID_TRIGGER(
        `${where}.trigger_name: ${JSON.stringify(triggerName)} is not an accepted event trigger name; accepted: ${ACCEPTED_TRIGGER_NAMES.join(', ')}`,
      );
    return { triggerType, triggerName: name };
  }
  if (triggerType === 'sync_hook') {
    if (!(SYNC_HOOK_NAMES as readonly string[]).includes(triggerName))
      throw WebhookErrors.INVALID_TRIGGER(
        `${where}.trigger_name: ${JSON.stringify(triggerName)} is not a sync_hook trigger; the only one is ${SYNC_HOOK_NAMES.join(', ')}`,
      );
    return { triggerType, triggerName };
  }
  throw WebhookErrors.INVALID_TRIGGER(
    `${where}.trigger_type: must be event or sync_hook (got ${JSON.stringify(triggerType)})`,
  );
}
