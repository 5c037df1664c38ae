import { type OAuthDeviceAuthorization, OAuthError } from '../../../core/capabilities/oauth2-server.ts';
import { randomSecret } from '../../../core/ids.ts';
import { parseScope } from '../../oauth2/grants/index.ts';
import type { DeviceStore } from './store.ts';
import { newUserCode } from './user-code.ts';

/** Seconds a device authorization lives (RFC 8628 §3.2 expires_in). */
export const DEVICE_TTL_SECONDS = 600;
/** Seconds the device waits between polls at first (RFC 8628 §3.2 interval, its default). */
export const DEVICE_INTERVAL_SECONDS = 5;
/** The hosted page where the person enters the user code. */
export const DEVICE_PAGE_PATH = '/oauth2/device';

/** The scope asked for: each one the client's, in order; absent, all of the client's. */
function askedScope(text: string | undefined, allowed: readonly string[]): string[] {
  if (text === undefined) return [...allowed];
  const scope = text.length <= 2048 ? parseScope(text) : undefined;
  if (!scope)
    throw new OAuthError('invalid_scope', 'scope must be space-delimited scope tokens (RFC 6749 §3.3)');
  const other = scope.find((s) => !allowed.includes(s));
  if (other !== undefined)
    throw new OAuthError(
      'invalid_scope',
      `scope ${JSON.stringify(other.slice(0, 64))} is not one of the client's scopes`,
    );
  return scope;
}

/**
 * POST /oauth2/device_authorization's work (RFC 8628 §3.1, §3.2), once the oauth2 plugin has
 * authenticated the client and checked its grant types: a random device code and an easy user code,
 * stored as digests, and where the person goes with it.
 */
export function deviceAuthorization(deps: {
  devices: DeviceStore;
  baseUrl: string;
}): OAuthDeviceAuthorization {
  const verificationUri = `${deps.baseUrl}${DEVICE_PAGE_PATH}`;
  return {
    async handle({ client, params }) {
      const scope = askedScope(params.get('scope'), client.scopes);
      const deviceCode = randomSecret('');
      for (let attempt = 0; attempt < 3; attempt++) {
        const userCode = newUserCode();
        const created = await deps.devices.create({
          deviceCode,
          userCode: userCode.replace('-', ''),
          orgId: client.orgId,
          clientId: client.clientId,
          scope,
          interval: DEVICE_INTERVAL_SECONDS,
          ttlMs: DEVICE_TTL_SECONDS * 1000,
        });
        if (created)
          return {
            device_code: deviceCode,
            user_code: userCode,
            verification_uri: verificationUri,
            verification_uri_complete: `${verificationUri}?user_code=${userCode}`,
            expires_in: DEVICE_TTL_SECONDS,
            interval: DEVICE_INTERVAL_SECONDS,
          };
      }
      throw new OAuthError('temporarily_unavailable', 'no user code could be drawn: try again', 400);
    },
  };
}
