/**
 * The bound of the oauth2 benchmark: a bare Elysia endpoint that signs one ES256 JWT per POST, with
 * node:crypto's synchronous sign on the event loop's thread, nothing else: no form, no client.
 * BARE_SIGNER=jose signs with jose's SignJWT instead (WebCrypto, awaited, off the thread: as the
 * service's token endpoint signs). The faster of the two is the bound. BARE_READ=form reads the
 * request's form first (its body, parsed), the least any token endpoint does before it signs.
 * BARE_SERVER=bun is the ceiling: no framework, Bun.serve itself, which reads the form and signs with
 * WebCrypto directly (off the event loop's thread): the fastest a single process of this runtime answers
 * a token request, whatever else its endpoint does.
 */
import { createPrivateKey, sign } from 'node:crypto';
import { Elysia } from 'elysia';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

const { privateKey } = await generateKeyPair('ES256', { extractable: true });
const key = createPrivateKey({
  key: (await exportJWK(privateKey)) as import('node:crypto').JsonWebKey,
  format: 'jwk',
});
const header = Buffer.from(JSON.stringify({ alg: 'ES256', kid: 'bench', typ: 'at+jwt' })).toString(
  'base64url',
);
const useJose = process.env.BARE_SIGNER === 'jose';

function claims() {
  const iat = Math.floor(Date.now() / 1000);
  return {
    iss: 'http://127.0.0.1',
    sub: 'bench-client',
    aud: 'http://127.0.0.1',
    client_id: 'bench-client',
    scope: 'read',
    jti: crypto.randomUUID(),
    iat,
    exp: iat + 3600,
  };
}

/** The token's header and claims as its signature covers them. */
const signingInput = () => `${header}.${Buffer.from(JSON.stringify(claims())).toString('base64url')}`;

function signSync(): string {
  const input = signingInput();
  const signature = sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

const signJose = () =>
  new SignJWT(claims()).setProtectedHeader({ alg: 'ES256', kid: 'bench', typ: 'at+jwt' }).sign(privateKey);

const answer = async () => ({
  access_token: useJose ? await signJose() : signSync(),
  token_type: 'bearer',
  expires_in: 3600,
  scope: 'read',
});
/** The ceiling's signature: WebCrypto itself, without jose's checks and copies. */
const encoder = new TextEncoder();
async function signWebCrypto(): Promise<string> {
  const input = signingInput();
  const signature = await crypto.subtle.sign(
    { name: 'ECDSA', hash: 'SHA-256' },
    privateKey,
    encoder.encode(input),
  );
  return `${input}.${Buffer.from(signature).toString('base64url')}`;
}

if (process.env.BARE_SERVER === 'bun') {
  const headers = { 'content-type': 'application/json', 'cache-control': 'no-store' };
  const server = Bun.serve({
    port: Number(process.env.PORT ?? 0),
    hostname: '127.0.0.1',
    routes: {
      '/token': {
        async POST(request) {
          const form = new URLSearchParams(await request.text());
          if (form.get('grant_type') !== 'client_credentials')
            return new Response('not a client_credentials grant', { status: 400 });
          const body = {
            access_token: await signWebCrypto(),
            token_type: 'bearer',
            expires_in: 3600,
            scope: 'read',
          };
          return new Response(JSON.stringify(body), { headers });
        },
      },
    },
    fetch: () => new Response('not found', { status: 404 }),
  });
  console.log(JSON.stringify({ msg: 'listening', port: server.port }));
} else {
  serveElysia();
}

function serveElysia() {
  const readsForm = process.env.BARE_READ === 'form';
  const app = readsForm
    ? new Elysia().post(
        '/token',
        async ({ request }) => {
          const form = new URLSearchParams(await request.text());
          if (form.get('grant_type') !== 'client_credentials')
            throw new Error('not a client_credentials grant');
          return answer();
        },
        { parse: 'none' },
      )
    : new Elysia().post('/token', answer);
  app.listen({ port: Number(process.env.PORT ?? 0), hostname: '127.0.0.1' });
  console.log(JSON.stringify({ msg: 'listening', port: app.server?.port }));
}
