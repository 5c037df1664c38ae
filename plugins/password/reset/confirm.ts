import { eventHandle, type PersonDirectory } from '../../../core/capabilities/person-directory.ts';
import type { Hooks } from '../../../core/contract/hooks.ts';
import { PasswordChangeInitiator } from '../../../core/events/shared-types.ts';
import type { EventPublisher } from '../../../core/events/types.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { revokePersonTokens } from '../../../core/tokens/revoke-person-tokens.ts';
import { PasswordErrors } from '../errors.ts';
import type { Hasher } from '../hashing/hashing.ts';
import { checkNewPassword } from '../policy/policy.ts';
import type { CredentialStore } from '../store/credentials.ts';
import type { OpenReset, ResetTokens, TokenRefusal } from './tokens.ts';

/** What a refused token's 400 says. */
export function refusalMessage(refusal: TokenRefusal, ttlMinutes: number): string {
  switch (refusal) {
    case 'expired':
      return `token: expired (a reset link works for ${ttlMinutes} minutes); ask for a new one`;
    case 'used':
      return 'token: already used; ask for a new reset if the password must change again';
    case 'superseded':
      return 'token: superseded by a newer reset request; use the link of the latest message';
    case 'password_changed':
      return 'token: void, the password was changed since the link was sent; ask for a new one';
    default:
      return 'token: unknown; no reset was asked for with this token in this organization';
  }
}

export interface ConfirmDeps {
  storage: Storage;
  tokens: ResetTokens;
  credentials: CredentialStore;
  hasher: Hasher;
  directory: PersonDirectory;
  events: EventPublisher;
  hooks: Hooks;
  clock: Clock;
  /** Revoke the person's earlier tokens on a reset. */
  revokeTokens: boolean;
}

/**
 * Sets a password through a reset token: the token is checked (400 naming why it resets nothing), then
 * the password policy (400; the token stays usable), then in one transaction the token is used, the
 * hash set, the email address the link went to marked verified, the person's other reset tokens
 * voided, their earlier tokens revoked (a setting), and PasswordChanged_v1 published with initiated_by EndUser and the handle the link was sent to. A
 * refusal changes nothing.
 */
export function createResetConfirmation(deps: ConfirmDeps) {
  const ttlMinutes = Math.round(deps.tokens.ttlMs / 60_000);
  const refuse = (refusal: TokenRefusal) =>
    PasswordErrors.RESET_TOKEN_REFUSED(refusalMessage(refusal, ttlMinutes));

  /** The person of a reset, while it may still reset: gone is unknown, disabled is refused. */
  async function findResettablePerson(reset: OpenReset) {
    const person = await deps.directory.get(reset.orgId, reset.personId);
    if (!person) throw refuse('unknown');
    // Disabled since the link was sent (during an incident, say): its links set nothing until enabled.
    if (!person.active)
      throw PasswordErrors.RESET_TOKEN_REFUSED(
        'token: void while the person is disabled; the organization must enable it first',
      );
    return person;
  }

  /** The open reset of a token (in `orgId`, when given), or a 400 naming why there is none. */
  async function open(token: string, orgId?: string): Promise<OpenReset> {
    const found = await deps.tokens.find(token, orgId);
    if (!found.ok) throw refuse(found.refusal);
    await findResettablePerson(found.reset);
    return found.reset;
  }

  async function confirm(token: string, password: string, orgId?: string): Promise<OpenReset> {
    const reset = await open(token, orgId);
    const normal = checkNewPassword(password);
    const person = await findResettablePerson(reset);
    const hash = await deps.hasher.hash(normal);
    const lost = new Error('the token was used meanwhile');
    const done = await deps.storage
      .transaction(async (tx) => {
        // Rolled back (by throwing) when another confirmation used the token first.
        if (!(await deps.tokens.consume(tx, reset))) throw lost;
        await deps.credentials.setIn(tx, reset.orgId, reset.personId, hash);
        // The link went to this address and came back: it reaches the person (handles other than email
        // addresses are sent no link). A handle the person no longer holds is left alone.
        if (reset.handle.type === 'email_address')
          await deps.directory.markVerified(reset.orgId, reset.personId, reset.handle, { tx });
        if (deps.revokeTokens)
          await deps.hooks.run(revokePersonTokens, {
            orgId: reset.orgId,
            personId: reset.personId,
            before: deps.clock.now(),
            reason: 'password_reset',
            tx,
          });
        await deps.events.publish(
          reset.orgId,
          'PasswordChanged_v1',
          {
            person_id: person.personId,
            region: person.region,
            handle: eventHandle(reset.handle),
            initiated_by: PasswordChangeInitiator.EndUser,
          },
          { tx },
        );
        return true;
      })
      .catch((e) => {
        if (e === lost) return false;
        throw e;
      });
    if (!done) {
      const now = await deps.tokens.find(token, reset.orgId);
      throw refuse(now.ok ? 'used' : now.refusal);
    }
    return reset;
  }

  return { open, confirm, ttlMinutes };
}

export type ResetConfirmation = ReturnType<typeof createResetConfirmation>;
