import { eventCatalogue } from './catalogue/index.ts';

/**
 * The trigger names the spec accepts for `event` triggers, exactly as it lists them and in its order,
 * including its one odd spelling `MitmAttackDetectedV1`. Cloud-provider events are not among them.
 */
export const ACCEPTED_TRIGGER_NAMES = [
  'AuthenticationSucceeded_v1',
  'AuthenticationFailed_v1',
  'PersonCreated_v1',
  'AnonymousPersonCreated_v1',
  'PersonDeleted_v1',
  'VirtualPageLoaded_v1',
  'ServiceSDKLoaded_v1',
  'PersonIdentified_v1',
  'PersonLoggedOut_v1',
  'TokenMinted_v1',
  'AnonymousTokenMinted_v1',
  'PasswordChanged_v1',
  'GdprConsentsChanged_v1',
  'GateServerStarted_v1',
  'GateRequestHandled_v1',
  'GateRequestCredentialFound_v1',
  'PermissionCreated_InRegion_v1',
  'PermissionCreated_v1',
  'PermissionDeleted_InRegion_v1',
  'PermissionDeleted_v1',
  'RoleCreated_InRegion_v1',
  'RoleCreated_v1',
  'RoleDeleted_InRegion_v1',
  'RoleDeleted_v1',
  'RoleUpdated_InRegion_v1',
  'RoleUpdated_v1',
  'RolesSetToPerson_InRegion_v1',
  'RolesSetToPerson_v1',
  'PermissionsSetToPerson_InRegion_v1',
  'PermissionsSetToPerson_v1',
  'PermissionUpdated_InRegion_v1',
  'PermissionUpdated_v1',
  'MitmAttackDetectedV1',
] as const;

export type AcceptedTriggerName = (typeof ACCEPTED_TRIGGER_NAMES)[number];

// The spec's trigger list writes `MitmAttackDetectedV1` where its payload definition says
// `MitmAttackDetected_v1`; `<type>V<n>` is read as `<type>_v<n>` to find the catalogue entry.
const canonicalOf = (name: string): string => name.replace(/^(.+)V(\d+)$/, '$1_v$2');

// Accepted spelling or catalogue name -> catalogue name. Built from the spec's list, so a name that is
// neither accepted nor the catalogue name of an accepted one (a cloud-provider event, a made-up alias
// such as `PersonCreatedV1`) never resolves.
const resolved = new Map<string, string>();
for (const accepted of ACCEPTED_TRIGGER_NAMES) {
  const canonical = eventCatalogue.has(accepted) ? accepted : canonicalOf(accepted);
  if (!eventCatalogue.get(canonical)?.triggerable) continue;
  resolved.set(accepted, canonical);
  resolved.set(canonical, canonical);
}

/**
 * The canonical trigger name for an `event` trigger, or undefined when the spec does not accept it.
 *
 * The canonical name is the catalogue's versioned name, which is also the `event_name` of the events
 * themselves: the trigger API stores and returns it, and the router matches a trigger against an event
 * with one string comparison. Both spellings of the MITM trigger resolve to `MitmAttackDetected_v1`.
 * Names are case-sensitive; cloud-provider events and unknown names resolve to undefined.
 *
 * @example acceptedTriggerName('MitmAttackDetectedV1') // 'MitmAttackDetected_v1'
 * @example acceptedTriggerName('AWSIAMRoleCreated_v1') // undefined
 */
export const acceptedTriggerName = (name: string): string | undefined => resolved.get(name);

// Catalogue name -> the spelling of the spec's trigger list, where they differ.
const listSpelling = new Map<string, string>();
for (const accepted of ACCEPTED_TRIGGER_NAMES) {
  const canonical = resolved.get(accepted);
  if (canonical && canonical !== accepted) listSpelling.set(canonical, accepted);
}

/**
 * A trigger name as the spec's trigger list writes it, for what the service shows: the trigger list
 * and the `trigger_name` claim of deliveries (`trigger_name` is "the name accepted for the trigger").
 *
 * @example triggerListName('MitmAttackDetected_v1') // 'MitmAttackDetectedV1'
 * @example triggerListName('PersonCreated_v1') // 'PersonCreated_v1'
 */
export const triggerListName = (name: string): string => listSpelling.get(name) ?? name;

/** The canonical names of every event a webhook may subscribe to, in the spec's order. */
export const TRIGGERABLE_EVENT_NAMES: readonly string[] = [...new Set(resolved.values())];
