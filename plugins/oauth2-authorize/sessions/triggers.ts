import type { HookAttachment } from '../../../core/contract/hooks.ts';
import { beforePersonDeleted } from '../../../core/persons/before-person-deleted.ts';
import { personDisabled } from '../../../core/persons/person-disabled.ts';
import type { Transaction } from '../../../core/ports/storage.ts';
import { revokePersonTokens } from '../../../core/tokens/revoke-person-tokens.ts';
import type { SessionEnding } from './end.ts';
import type { SessionStore } from './store.ts';

/**
 * A person's sign-in sessions end, in the transaction of the change, when the person is deleted (before
 * the row goes, so its region is still there for PersonLoggedOut_v1), disabled, or resets a forgotten
 * password (with the deployment's PASSWORD_RESET_REVOKE_TOKENS: a reset link proves someone else may
 * have held the password, so no browser stays signed in with it). A failure rolls the change back.
 */
export function sessionEndingTriggers(sessions: SessionStore, finish: SessionEnding): HookAttachment[] {
  const endAllOf = async (o: { orgId: string; personId: string; tx: Transaction }) =>
    finish(await sessions.endAll(o.orgId, o.personId, o.tx), { tx: o.tx });
  return [
    beforePersonDeleted.attach({ run: endAllOf }),
    personDisabled.attach({ run: endAllOf }),
    revokePersonTokens.attach({ run: endAllOf }),
  ];
}
