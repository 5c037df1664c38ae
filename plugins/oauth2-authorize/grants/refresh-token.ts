import { OAuthError, type OAuthGrant } from '../../../core/capabilities/oauth2-server.ts';
import type { TokenIssuer } from '../../../core/capabilities/token-issuer.ts';
import { ServiceError } from '../../../core/errors.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import { parseScope } from '../authorize-request.ts';
import { issueTokens, requireActivePerson, type TokenIssuing } from './issue-tokens.ts';
import type { FamilyRevoker } from './revocation.ts';

/**
 * The refresh_token grant (RFC 6749 §6) with rotation: every refresh spends the token presented and
 * answers a new one of the same family. A spent token presented again within `graceSeconds` of its
 * spending also succeeds (two tabs refreshing at once, a response lost on the way); later, it is taken
 * for a stolen copy and the whole family is revoked (RFC 9700 §4.14.2). `scope` may narrow the grant,
 * never widen it; the new refresh token keeps the family's scope.
 */
export function refreshTokenGrant(
  deps: TokenIssuing & {
    issuer: TokenIssuer;
    clock: Clock;
    revokeFamily: FamilyRevoker;
    graceSeconds: number;
  },
): OAuthGrant {
  return {
    type: 'refresh_token',
    async handle({ client, params, request }) {
      const presented = params.get('refresh_token');
      if (!presented) throw new OAuthError('invalid_request', 'refresh_token is required');
      const found = await deps.families.findRefresh(presented);
      if (!found) throw new OAuthError('invalid_grant', 'refresh_token is not a valid refresh token');
      const { family } = found;
      if (family.clientId !== client.clientId)
        throw new OAuthError('invalid_grant', 'refresh_token was issued to another client');
      if (family.revoked) throw new OAuthError('invalid_grant', 'refresh_token has been revoked');
      const now = deps.clock.now();
      if (found.expiresAt <= now) throw new OAuthError('invalid_grant', 'refresh_token has expired');

      let scope = family.scope.filter((s) => client.scopes.includes(s));
      const asked = params.get('scope');
      if (asked !== undefined) {
        const narrowed = parseScope(asked);
        if (!narrowed || narrowed.length === 0)
          throw new OAuthError(
            'invalid_scope',
            'scope must be space-delimited scope tokens (RFC 6749 section 3.3)',
          );
        const wider = narrowed.filter((s) => !scope.includes(s));
        if (wider.length)
          throw new OAuthError(
            'invalid_scope',
            `scope ${wider.join(' ')} was not granted: a refresh may narrow the original scope, never widen it`,
          );
        scope = narrowed;
      }

      const spent = await deps.families.spend(found.tokenHash);
      if (!spent.won && now - spent.spentAt > deps.graceSeconds * 1000) {
        await deps.revokeFamily(family);
        throw new OAuthError(
          'invalid_grant',
          'refresh_token has already been used; every token of its grant is revoked',
        );
      }

      await requireActivePerson(deps.directory, family.orgId, family.personId);
      // Before the tokens: a refusal by the token_minted hook leaves no new refresh token behind.
      let idToken: string | undefined;
      if (scope.includes('openid')) {
        // A fresh ID token for the same authentication (OIDC Core §12.2): same auth_time, no nonce.
        const issued = await deps.issuer
          .issue({
            orgId: family.orgId,
            personId: family.personId,
            methods: family.methods,
            issuer: 'oauth2',
            authentications: [],
            request,
            idToken: { clientId: client.clientId, authTime: family.authTime },
          })
          .catch((error: unknown) => {
            // The token_minted hook blocked it: the person may not have tokens any more.
            if (error instanceof ServiceError && error.status === 403)
              throw new OAuthError('invalid_grant', `the ID token was refused: ${error.message}`);
            throw error;
          });
        idToken = issued.token;
      }
      const { response } = await issueTokens(deps, {
        client,
        familyId: family.familyId,
        personId: family.personId,
        scope,
        authTime: family.authTime,
      });
      if (idToken !== undefined) response.id_token = idToken;
      return response;
    },
  };
}
