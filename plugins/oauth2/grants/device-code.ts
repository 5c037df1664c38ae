import { DEVICE_CODE_GRANT, OAuthError, type OAuthGrant } from '../../../core/capabilities/oauth2-server.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import { issueTokens, requireActivePerson, type TokenIssuing } from './issue-tokens.ts';
import { stillAllowedScope } from './scope.ts';
import type { DeviceCodes, FamilyRevoker } from './stores.ts';

/** Seconds RFC 8628 §3.5 adds to the interval at each slow_down. */
export const SLOW_DOWN_SECONDS = 5;

/**
 * The device_code grant (RFC 8628 §3.4, §3.5): the device polls with its device code. Another client's
 * code is invalid_grant; a poll sooner than the interval after the last one is slow_down (and the
 * interval grows by 5 s); then expired_token, authorization_pending, access_denied, and once the person
 * approved, the tokens exactly once (access, refresh when the client may refresh, the ID token minted
 * at the sign-in with openid), bound to the key of the poll's DPoP proof when it has one (RFC 9449). A
 * device code used again is invalid_grant.
 */
export function deviceCodeGrant(
  deps: TokenIssuing & { devices: DeviceCodes; clock: Clock; revokeFamily: FamilyRevoker },
): OAuthGrant {
  return {
    type: DEVICE_CODE_GRANT,
    async handle({ client, params, dpop }) {
      const presented = params.get('device_code');
      if (!presented) throw new OAuthError('invalid_request', 'device_code is required');
      const found = presented.length <= 256 ? await deps.devices.find(presented) : undefined;
      // Another client's code is as unknown as a wrong one: nothing tells it the code exists.
      if (!found || found.clientId !== client.clientId)
        throw new OAuthError('invalid_grant', 'device_code is not a device code of this client');
      const now = deps.clock.now();
      if (found.expiresAt <= now && found.status !== 'issued')
        throw new OAuthError(
          'expired_token',
          'the device code has expired: start a new device authorization',
        );
      if (found.status === 'pending' || found.status === 'denied') {
        const tooSoon = found.lastPolledAt !== undefined && now - found.lastPolledAt < found.interval * 1000;
        const interval = tooSoon ? found.interval + SLOW_DOWN_SECONDS : found.interval;
        await deps.devices.polled(found.deviceCodeHash, now, interval);
        if (tooSoon)
          throw new OAuthError(
            'slow_down',
            `polled sooner than the interval: wait ${interval} seconds between polls`,
          );
      }
      if (found.status === 'pending')
        throw new OAuthError('authorization_pending', 'the person has not approved this device yet');
      if (found.status === 'denied')
        throw new OAuthError('access_denied', 'the person denied this device authorization');
      const approved =
        found.status === 'approved' ? await deps.devices.claim(found.deviceCodeHash) : undefined;
      if (!approved)
        throw new OAuthError(
          'invalid_grant',
          'the device code was used already: its tokens were issued once',
        );

      await requireActivePerson(deps.directory, found.orgId, approved.personId);
      const scope = stillAllowedScope(found.scope, client);
      // RFC 9449 §5, as the authorization code grant: a public client's refresh tokens are bound to the
      // key of the poll that gets them; a confidential client's are not (it authenticates each refresh).
      if (dpop && client.type === 'public') await deps.families.bindKey(approved.familyId, dpop.jkt);
      const { response } = await issueTokens(deps, {
        client,
        dpopJkt: dpop?.jkt,
        familyId: approved.familyId,
        personId: approved.personId,
        scope,
        authTime: approved.authTime,
      });
      // A revocation (revoke-all, a password reset) since the approval: nothing issued outlives it.
      if (!(await deps.families.stillGranted(approved.familyId))) {
        await deps.revokeFamily({ familyId: approved.familyId });
        throw new OAuthError('invalid_grant', "the person's grants were revoked meanwhile");
      }
      if (scope.includes('openid')) response.id_token = approved.idToken;
      return response;
    },
  };
}
