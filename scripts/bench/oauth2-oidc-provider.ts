/**
 * node-oidc-provider (the npm package oidc-provider) configured for the client_credentials grant with
 * ES256 JWT access tokens (through its resource indicators), served by node:http on this runtime: the
 * server teams would otherwise pick, doing the same work as the service's token endpoint.
 */
import { createServer } from 'node:http';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

const port = Number(process.env.PORT ?? 0);
const { privateKey } = await generateKeyPair('ES256', { extractable: true });
const jwk = { ...(await exportJWK(privateKey)), alg: 'ES256', use: 'sig', kid: 'bench' };
const issuer = `http://127.0.0.1:${port}`;
const resource = 'https://api.bench.example';

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: 'bench-client',
      client_secret: process.env.CLIENT_SECRET ?? 'bench-secret',
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: 'read',
      id_token_signed_response_alg: 'ES256',
    },
  ],
  jwks: { keys: [jwk] },
  scopes: ['read'],
  features: {
    clientCredentials: { enabled: true },
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

const server = createServer(provider.callback());
server.listen(port, '127.0.0.1', () => {
  const address = server.address();
  console.log(JSON.stringify({ msg: 'listening', port: typeof address === 'object' ? address?.port : port }));
});
