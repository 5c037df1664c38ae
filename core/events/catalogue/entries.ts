import { authenticationEvents } from './authentication.ts';
import { cloudProviderEvents } from './cloud.ts';
import { gateEvents } from './gate.ts';
import { personEvents } from './persons.ts';
import { roleEvents } from './roles.ts';

/** Every entry, each typed with its own name and members (`EventName` and `EventMembers` come from here). */
export const catalogueEntries = [
  ...authenticationEvents,
  ...personEvents,
  ...gateEvents,
  ...roleEvents,
  ...cloudProviderEvents,
];
