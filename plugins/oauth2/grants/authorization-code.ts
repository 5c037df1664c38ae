import { OAuthError, type OAuthGrant } from '../../../core/capabilities/oauth2-server.ts';
import { grantedResource } from '../../../core/tokens/audience.ts';
import { issueTokens, requireActivePerson, type TokenIssuing, userinfoClaimsMember } from './issue-tokens.ts';
import { isVerifier, verifierMatches } from './pkce.ts';
import { stillAllowedScope } from './scope.ts';
import type { CodeRedemption, FamilyRevoker } from './stores.ts';

const required = (params: ReadonlyMap<string, string>, name: string): string => {
  const value = params.get(name);
  if (!value) throw new OAuthError('invalid_request', `${name} is required`);
  return value;
};

/**
 * The PKCE verifier (RFC 7636 §4.5): `code_verifier`, or `code_challenge`, the name the spec's token
 * request gives it (its variant 2). Both, and different, are refused rather than one chosen.
 */
function readVerifier(params: ReadonlyMap<string, string>): string | undefined {
  const verifier = params.get('code_verifier');
  const specName = params.get('code_challenge');
  if (verifier !== undefined && specName !== undefined && verifier !== specName)
    throw new OAuthError(
      'invalid_request',
      "code_verifier and code_challenge (the same value under the spec's name) differ: send one of them",
    );
  return verifier ?? specName;
}

/** A code whose grant was revoked while it was exchanged: a replay racing it, a reset, revoke-all. */
const codeRevoked = () =>
  new OAuthError(
    'invalid_grant',
    "code's grant was revoked meanwhile (the code was used twice, or the person's tokens were revoked); the tokens issued with it are revoked",
  );

/**
 * The authorization_code grant (RFC 6749 §4.1.3, RFC 7636): burns the code, checks that it was issued
 * to this client for this redirect_uri and that the code_verifier matches its challenge, then answers
 * the access token, a refresh token (when the client may refresh) and, with openid, the ID token minted
 * at the login. A replayed code revokes every token it issued.
 */
export function authorizationCodeGrant(
  deps: TokenIssuing & { codes: CodeRedemption; revokeFamily: FamilyRevoker },
): OAuthGrant {
  return {
    type: 'authorization_code',
    async handle({ client, params, dpop }) {
      const presented = required(params, 'code');
      const redirectUri = required(params, 'redirect_uri');
      const verifier = readVerifier(params);
      if (verifier !== undefined && !isVerifier(verifier))
        throw new OAuthError(
          'invalid_request',
          'code_verifier must be 43 to 128 characters of A-Z, a-z, 0-9, "-", ".", "_" and "~" (RFC 7636 section 4.1)',
        );

      const burnt = await deps.codes.burn(presented);
      if (burnt.kind === 'unknown')
        throw new OAuthError('invalid_grant', 'code is not a valid authorization code');
      if (burnt.kind === 'expired')
        throw new OAuthError('invalid_grant', 'code has expired (codes live 60 seconds)');
      if (burnt.kind === 'replayed') {
        // RFC 6749 §4.1.2: a code used twice revokes what it issued; only its own client may trigger it.
        if (burnt.code.clientId === client.clientId)
          await deps.revokeFamily({ familyId: burnt.code.familyId });
        throw new OAuthError(
          'invalid_grant',
          'code has already been used; the tokens issued with it are revoked',
        );
      }
      const { code } = burnt;
      if (code.clientId !== client.clientId)
        throw new OAuthError('invalid_grant', 'code was issued to another client');
      if (code.redirectUri !== redirectUri)
        throw new OAuthError('invalid_grant', "redirect_uri does not match the authorization request's");
      // Removed from the client since the code was issued (a host lost, say): no longer trusted.
      if (!client.redirectUris.includes(redirectUri))
        throw new OAuthError('invalid_grant', "redirect_uri is no longer one of the client's redirect URIs");
      if (code.codeChallenge !== undefined) {
        if (verifier === undefined)
          throw new OAuthError(
            'invalid_grant',
            'code_verifier is required: the authorization request had a code_challenge',
          );
        if (!(await verifierMatches(verifier, code.codeChallenge)))
          throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge');
      } else if (verifier !== undefined)
        // RFC 9700 §4.8.2: a verifier for a code issued without a challenge is a downgrade attempt.
        throw new OAuthError(
          'invalid_grant',
          'code_verifier was sent but the authorization request had no code_challenge',
        );
      // RFC 9449 §10: a code bound to a DPoP key (dpop_jkt, or the proof of its pushed request) is
      // exchanged only with a proof by that key.
      if (code.dpopJkt !== undefined && dpop?.jkt !== code.dpopJkt)
        throw new OAuthError(
          'invalid_grant',
          dpop === undefined
            ? 'a DPoP proof is required: the authorization request bound the code to a DPoP key (dpop_jkt)'
            : "the DPoP proof's key is not the one the authorization request bound the code to (dpop_jkt)",
        );

      await requireActivePerson(deps.directory, code.orgId, code.personId);
      // A scope an administrator removed from the client since the login is not granted (as on refresh).
      const scope = stillAllowedScope(code.scope, client);
      // RFC 8707 §2.2: the token request may name the authorization request's resource, not another.
      const resource = grantedResource(client, code.resource, params.get('resource'), deps.publicBaseUrl);
      // RFC 9449 §5: a public client's refresh tokens are bound to its DPoP key; a confidential
      // client's are not (it authenticates each refresh), though its access tokens are.
      if (dpop && client.type === 'public') await deps.families.bindKey(code.familyId, dpop.jkt);
      const { response, access } = await issueTokens(deps, {
        client,
        dpopJkt: dpop?.jkt,
        familyId: code.familyId,
        personId: code.personId,
        scope,
        authTime: code.authTime,
        resource,
        ...userinfoClaimsMember(code.userinfoClaims),
        revoked: codeRevoked,
      });
      await deps.codes.recordAccess(code.codeHash, access);
      // A replay that raced this exchange, or a password reset since the login, revoked the family
      // before the access token was recorded: what was just issued must not outlive it. Read once the
      // record is in, waiting for a revocation under way (stillGranted).
      if (!(await deps.families.stillGranted(code.familyId))) {
        await deps.revokeFamily({ familyId: code.familyId });
        throw codeRevoked();
      }
      if (scope.includes('openid')) response.id_token = code.idToken;
      return response;
    },
  };
}
