import { OAuthError, type OAuthGrant } from '../../../core/capabilities/oauth2-server.ts';
import type { TokenIssuer } from '../../../core/capabilities/token-issuer.ts';
import { ServiceError } from '../../../core/errors.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import { grantedResource } from '../../../core/tokens/audience.ts';
import { amrOf } from '../../../core/tokens/authentication-context.ts';
import { issueTokens, requireActivePerson, type TokenIssuing, userinfoClaimsMember } from './issue-tokens.ts';
import { parseScope, stillAllowedScope } from './scope.ts';
import type { FamilyRevoker } from './stores.ts';

/**
 * The refresh_token grant (RFC 6749 §6) with rotation: every refresh spends the token presented and
 * answers a new one of the same family. A spent token presented again within `graceSeconds` of its
 * spending also succeeds (two tabs refreshing at once, a response lost on the way); later, it is taken
 * for a stolen copy and the whole family is revoked (RFC 9700 §4.14.2). The answers to one token are
 * one generation of one chain: the first of them used supersedes the others, which then count as
 * spent, so a second branch never lives on unseen. `scope` may narrow the grant, never widen it; the
 * new refresh token keeps the family's scope.
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
    async handle({ client, params, request, dpop }) {
      const presented = params.get('refresh_token');
      if (!presented) throw new OAuthError('invalid_request', 'refresh_token is required');
      // Nearly always one statement: the token is spent here if it is good for this client now.
      const fresh = await deps.families.spendFresh(presented, client.clientId);
      const found = fresh ?? (await deps.families.findRefresh(presented));
      if (!found) throw new OAuthError('invalid_grant', 'refresh_token is not a valid refresh token');
      const { family } = found;
      if (!fresh) {
        if (family.clientId !== client.clientId)
          throw new OAuthError('invalid_grant', 'refresh_token was issued to another client');
        if (family.revoked) throw new OAuthError('invalid_grant', 'refresh_token has been revoked');
        if (found.expiresAt <= deps.clock.now())
          throw new OAuthError('invalid_grant', 'refresh_token has expired');
        // Spent already, or superseded (another answer of its generation was used): a concurrent
        // refresh within the grace window, or a stolen copy replayed. Within the window the answer joins
        // the family's current generation, so the family stays one chain (oauth2-authorize's
        // store/families.ts).
        const spent = await deps.families.spend(found.tokenHash, found.spentAt);
        const spentAt = spent.won ? found.spentAt : spent.spentAt;
        if (spentAt !== undefined && deps.clock.now() - spentAt > deps.graceSeconds * 1000) {
          await deps.revokeFamily(family);
          throw new OAuthError(
            'invalid_grant',
            'refresh_token has already been used; every token of its grant is revoked',
          );
        }
      }

      // RFC 9449 §5: a bound refresh token needs a proof by its key. Refused before anything is issued:
      // the token stays as good as it was for its holder, who has the key.
      if (family.dpopJkt !== undefined && dpop?.jkt !== family.dpopJkt) {
        if (fresh) await deps.families.unspend(fresh);
        throw new OAuthError(
          'invalid_dpop_proof',
          dpop
            ? "the DPoP proof's key is not the one this refresh token is bound to"
            : 'this refresh token is bound to a DPoP key: send a DPoP proof by that key',
        );
      }
      if (dpop && family.dpopJkt === undefined && client.type === 'public')
        await deps.families.bindKey(family.familyId, dpop.jkt);

      let scope = stillAllowedScope(family.scope, client);
      const asked = params.get('scope');
      if (asked !== undefined) {
        const narrowed = parseScope(asked);
        const wider = narrowed?.filter((s) => !scope.includes(s)) ?? [];
        if (!narrowed || narrowed.length === 0 || wider.length) {
          // Refused before anything was issued: the token stays as good as it was.
          if (fresh) await deps.families.unspend(fresh);
          throw new OAuthError(
            'invalid_scope',
            !narrowed || narrowed.length === 0
              ? 'scope must be space-delimited scope tokens (RFC 6749 section 3.3)'
              : `scope ${wider.join(' ')} was not granted: a refresh may narrow the original scope, never widen it`,
          );
        }
        scope = narrowed;
      }
      // The family's resource, kept (RFC 8707 §2.2): a refresh may name it again, never another.
      let resource: string | undefined;
      try {
        resource = grantedResource(client, family.resource, params.get('resource'), deps.publicBaseUrl);
      } catch (error) {
        if (fresh) await deps.families.unspend(fresh);
        throw error;
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
            idToken: {
              clientId: client.clientId,
              issuer: client.issuer,
              authTime: family.authTime,
              amr: amrOf(family.methods),
              ...(family.sessionId ? { sessionId: family.sessionId } : {}),
            },
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
        resource,
        dpopJkt: dpop?.jkt,
        ...userinfoClaimsMember(family.userinfoClaims),
      });
      if (idToken !== undefined) response.id_token = idToken;
      return response;
    },
  };
}
