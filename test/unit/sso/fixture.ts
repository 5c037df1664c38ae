import { startTestService, type TestService } from '../../helpers/service.ts';

export const PATH = '/organizations/sso/oidc/provider-credentials';

/** A PKCS8 PEM of a fresh key: P-256 by default, or another curve or algorithm to be refused. */
export async function pkcs8Pem(kind: 'P-256' | 'P-384' | 'RSA' = 'P-256') {
  const pair = (await crypto.subtle.generateKey(
    kind === 'RSA'
      ? {
          name: 'RSASSA-PKCS1-v1_5',
          modulusLength: 2048,
          publicExponent: new Uint8Array([1, 0, 1]),
          hash: 'SHA-256',
        }
      : { name: 'ECDSA', namedCurve: kind },
    true,
    ['sign', 'verify'],
  )) as CryptoKeyPair;
  const der = new Uint8Array(await crypto.subtle.exportKey('pkcs8', pair.privateKey));
  const b64 = btoa(String.fromCharCode(...der)).replace(/.{64}/g, '$&\n');
  return {
    pem: `-----BEGIN PRIVATE KEY-----\n${b64}\n-----END PRIVATE KEY-----\n`,
    publicKey: pair.publicKey,
  };
}

/** Apple options with a fresh P-256 key. */
export async function appleOptions(extra: Record<string, unknown> = {}) {
  const { pem, publicKey } = await pkcs8Pem();
  return {
    options: { private_key: pem, team_id: 'TEAM012345', key_id: 'KEY0123456', ...extra },
    publicKey,
    pem,
  };
}

/** A service with the default deployment (sso among its plugins) and a second organization. */
export async function startSsoService(): Promise<TestService & { other: { orgId: string; key: string } }> {
  const t = await startTestService();
  const { organization, apiKey } = await t.service.ctx.orgs.create('Other');
  return { ...t, other: { orgId: organization.id, key: apiKey } };
}
