import type { LogoutTokenRequest, TokenIssuer } from '../../../core/capabilities/token-issuer.ts';
import { uuidv7 } from '../../../core/ids.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import { issuerFor } from './issuer-for.ts';
import type { TokenKeys } from './keys.ts';

/** A logout token's lifetime (Back-Channel Logout 1.0 asks for a short one): two minutes. */
export const LOGOUT_TOKEN_LIFETIME_S = 120;
/** The JOSE `typ` of a logout token (Back-Channel Logout 1.0, section 2.4, as the 2022 errata set it). */
export const LOGOUT_TOKEN_TYPE = 'logout+jwt';
/** The one member of a logout token's `events` claim. */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/**
 * `signLogoutToken` of the tokenIssuer capability: the claims Back-Channel Logout 1.0 names, with the
 * issuer, subject and `oid` of the client's ID tokens, signed by the same keys. `typ: logout+jwt` keeps a
 * logout token from ever passing for an identity or ID token (validation accepts typ JWT only), and it
 * carries no `nonce`, which the specification forbids.
 */
export function createLogoutTokenSigner(deps: {
  keys: TokenKeys;
  clock: Clock;
  issuer: string;
}): TokenIssuer['signLogoutToken'] {
  const { keys, clock, issuer } = deps;
  return async (req: LogoutTokenRequest) => {
    for (const name of ['orgId', 'clientId', 'personId', 'sessionId'] as const)
      if (typeof req[name] !== 'string' || req[name] === '')
        throw new Error(`tokens: a logout token needs ${name} (got ${JSON.stringify(req[name])})`);
    const nowMs = clock.now();
    const iat = Math.floor(nowMs / 1000);
    return keys.sign(
      {
        iss: issuerFor(issuer, req.orgId, req.issuer),
        aud: req.clientId,
        sub: req.personId,
        oid: req.orgId,
        sid: req.sessionId,
        iat,
        exp: iat + LOGOUT_TOKEN_LIFETIME_S,
        jti: uuidv7(nowMs),
        events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
      },
      LOGOUT_TOKEN_TYPE,
    );
  };
}
