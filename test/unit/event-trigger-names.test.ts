import { describe, expect, it } from 'bun:test';
import { eventCatalogue } from '../../core/events/catalogue/index.ts';
import {
  ACCEPTED_TRIGGER_NAMES,
  acceptedTriggerName,
  TRIGGERABLE_EVENT_NAMES,
  triggerListName,
} from '../../core/events/trigger-names.ts';

describe('acceptedTriggerName', () => {
  it('reads both spellings of the MITM trigger as the catalogue name', () => {
    expect(acceptedTriggerName('MitmAttackDetectedV1')).toBe('MitmAttackDetected_v1');
    expect(acceptedTriggerName('MitmAttackDetected_v1')).toBe('MitmAttackDetected_v1');
    expect(triggerListName('MitmAttackDetected_v1')).toBe('MitmAttackDetectedV1');
    expect(triggerListName('PersonCreated_v1')).toBe('PersonCreated_v1');
  });

  it('returns every other accepted name unchanged', () => {
    for (const name of ACCEPTED_TRIGGER_NAMES.filter((n) => n !== 'MitmAttackDetectedV1'))
      expect(acceptedTriggerName(name)).toBe(name);
  });

  it('refuses every cloud-provider event', () => {
    const cloud = [...eventCatalogue.keys()].filter((n) => /^(AWS|GCP|ActiveDirectory)/.test(n));
    expect(cloud.length).toBe(12);
    for (const name of cloud)
      expect({ name, resolved: acceptedTriggerName(name) }).toEqual({ name, resolved: undefined });
  });

  it('is case-sensitive', () => {
    for (const name of [
      'authenticationsucceeded_v1',
      'AUTHENTICATIONSUCCEEDED_V1',
      'mitmAttackDetectedV1',
      'MitmAttackDetected_V1',
      'MitmAttackDetectedv1',
    ])
      expect({ name, resolved: acceptedTriggerName(name) }).toEqual({ name, resolved: undefined });
  });

  it('refuses unknown names, other versions and made-up aliases', () => {
    for (const name of [
      '',
      'PersonCreated',
      'PersonCreated_v2',
      'PersonCreatedV1',
      'token_minted',
      'EventType_UNSPECIFIED_v1',
      ' PersonCreated_v1',
    ])
      expect({ name, resolved: acceptedTriggerName(name) }).toEqual({ name, resolved: undefined });
  });

  it('lists the triggerable events by their canonical names, in the spec order', () => {
    expect(TRIGGERABLE_EVENT_NAMES.length).toBe(ACCEPTED_TRIGGER_NAMES.length);
    expect(TRIGGERABLE_EVENT_NAMES.at(-1)).toBe('MitmAttackDetected_v1');
    expect([...TRIGGERABLE_EVENT_NAMES].sort()).toEqual(
      [...eventCatalogue.values()]
        .filter((d) => d.triggerable)
        .map((d) => d.name)
        .sort(),
    );
  });
});
