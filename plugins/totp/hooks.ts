import type { PersonDirectory } from '../../core/capabilities/person-directory.ts';
import type { HookAttachment } from '../../core/contract/hooks.ts';
import { deletePersonCredential, personCredentials } from '../../core/factors/credentials.ts';
import { checkSecondFactor, type SecondFactorOutcome } from '../../core/factors/second-factor.ts';
import { isUuid } from '../../core/ids.ts';
import { beforePersonDeleted } from '../../core/persons/before-person-deleted.ts';
import type { Clock } from '../../core/ports/clock.ts';
import { forgetPerson, listed, type TotpStore } from './store/credentials.ts';
import type { CodeChecker } from './verify/check-code.ts';

/**
 * What the plugin attaches to core's factor points: the second step for `totp` (a code of the app or a
 * recovery code), the person's confirmed authenticator in the credentials list, the deletion of one
 * through the credentials API, and the deletion of all with the person.
 */
export function totpHooks(deps: {
  store: TotpStore;
  check: CodeChecker;
  directory: PersonDirectory;
  clock: Clock;
}): HookAttachment[] {
  const { store, check, directory, clock } = deps;
  return [
    checkSecondFactor.attach({
      match: (i) => i.method === 'totp',
      async run({ orgId, personId, input, rc }): Promise<SecondFactorOutcome> {
        // Persons are UUIDs: any other ID has no authenticator (and no query is made with it).
        if (!isUuid(personId))
          return {
            ok: false,
            reason: 'not_enrolled',
            detail: 'this person has no confirmed TOTP authenticator',
          };
        const checked = await check(orgId, personId.toLowerCase(), input.code, rc.clientIp);
        if (!checked.ok) return checked;
        const handle = (await directory.get(orgId, personId))?.handles[0];
        return {
          ok: true,
          authentication: {
            handle: { type: handle?.type ?? '', value: handle?.value ?? '' },
            method: 'totp',
            timestamp: new Date(clock.now()).toISOString(),
          },
        };
      },
    }),
    personCredentials.attach({
      run: ({ orgId, personId, tx }) =>
        isUuid(personId) ? store.list(orgId, personId.toLowerCase(), tx) : [],
    }),
    deletePersonCredential.attach({
      // Another factor's credential IDs need not be UUIDs: those are not ours, and no query is made.
      match: (i) => isUuid(i.credentialId) && isUuid(i.personId),
      async run({ orgId, personId, credentialId, tx }) {
        const row = await store.remove(tx, orgId, personId.toLowerCase(), credentialId.toLowerCase());
        return row ? listed(row) : undefined;
      },
    }),
    beforePersonDeleted.attach({ run: ({ orgId, personId, tx }) => forgetPerson(tx, orgId, personId) }),
  ];
}
