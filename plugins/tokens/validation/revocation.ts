import type { TokenIssuer, TokenRevocation } from '../../../core/capabilities/token-issuer.ts';
import type { Hooks } from '../../../core/contract/hooks.ts';
import type { Storage, Transaction } from '../../../core/ports/storage.ts';
import { onTokenRevoked } from '../../../core/tokens/token-revoked.ts';
import type { Validator } from './validation.ts';

/**
 * `revoke` of the tokenIssuer capability: records the jti, then runs onTokenRevoked in the same
 * transaction (the caller's when it gives one), only when this call is the one that revoked it.
 */
export function createRevoke(deps: {
  storage: Storage;
  hooks: Hooks;
  validator: Validator;
}): TokenIssuer['revoke'] {
  const { storage, hooks, validator } = deps;
  return async function revoke(r: TokenRevocation, options: { tx?: Transaction } = {}): Promise<boolean> {
    const within = async (tx: Transaction) => {
      const fresh = await validator.revoke(tx, r.orgId, r.tokenId, r.expiresAt);
      if (fresh)
        await hooks.run(onTokenRevoked, {
          orgId: r.orgId,
          tokenId: r.tokenId,
          ...(r.personId !== undefined ? { personId: r.personId } : {}),
          reason: r.reason,
          tx,
        });
      return fresh;
    };
    return options.tx ? within(options.tx) : storage.transaction(within);
  };
}
