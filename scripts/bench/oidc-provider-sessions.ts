/**
 * node-oidc-provider (the npm package oidc-provider) as the sessions benchmark's comparison: one
 * confidential client (client_secret_basic, authorization_code and refresh_token, ES256 ID tokens),
 * ES256 JWT access tokens for one resource (through its resource indicators, as oauth2-oidc-provider.ts
 * configures them), a refresh token with every code as the service answers one, and one account. Its
 * interaction (GET /interaction/{uid}) signs that account in without a page and grants what was asked:
 * the browser then holds a session (its `_session` cookie) and the client a grant, so `prompt=none`
 * answers a code without an interaction. Served by node:http on this runtime; sessions, grants, codes
 * and refresh tokens are kept in memory (oidc-provider-memory.ts).
 */
import { createServer } from 'node:http';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import { unboundedMemoryAdapter } from './oidc-provider-memory.ts';

const port = Number(process.env.PORT ?? 0);
const { privateKey } = await generateKeyPair('ES256', { extractable: true });
const jwk = { ...(await exportJWK(privateKey)), alg: 'ES256', use: 'sig', kid: 'bench' };
const issuer = `http://127.0.0.1:${port}`;
const resource = 'https://api.bench.example';
const ACCOUNT = 'bench-account';

const provider = new Provider(issuer, {
  adapter: unboundedMemoryAdapter(),
  clients: [
    {
      client_id: 'bench-client',
      client_secret: process.env.CLIENT_SECRET ?? 'bench-secret',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: [process.env.REDIRECT_URI ?? 'http://127.0.0.1:9/callback'],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: 'openid read',
      id_token_signed_response_alg: 'ES256',
    },
  ],
  jwks: { keys: [jwk] },
  cookies: { keys: ['bench-cookie-key-of-the-loopback-provider'] },
  scopes: ['openid', 'read'],
  findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
  // The service answers a refresh token with every code of a client allowed the grant: the same here.
  issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  // The service's lifetimes: a login page 10 minutes, a session and what it granted 14 days.
  ttl: { Interaction: 600, Session: 1_209_600, Grant: 1_209_600 },
  features: {
    devInteractions: { enabled: false },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({
        scope: 'read',
        audience: resource,
        accessTokenFormat: 'jwt',
        accessTokenTTL: 3600,
        jwt: { sign: { alg: 'ES256' } },
      }),
    },
  },
});

const callback = provider.callback();
const server = createServer((req, res) => {
  if (!req.url?.startsWith('/interaction/')) return callback(req, res);
  // The sign-in and the consent, answered at once for the one account: what a login page would submit.
  void (async () => {
    try {
      const details = await provider.interactionDetails(req, res);
      const grant = new provider.Grant({ accountId: ACCOUNT, clientId: String(details.params.client_id) });
      // 'read' is one of the provider's scopes and the resource's: granted as both.
      grant.addOIDCScope('openid read');
      grant.addResourceScope(resource, 'read');
      const grantId = await grant.save();
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId: ACCOUNT }, consent: { grantId } },
        { mergeWithLastSubmission: false },
      );
    } catch (e) {
      res.statusCode = 500;
      res.end(String(e));
    }
  })();
});
server.listen(port, '127.0.0.1', () => {
  const address = server.address();
  console.log(JSON.stringify({ msg: 'listening', port: typeof address === 'object' ? address?.port : port }));
});
