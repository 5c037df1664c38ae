import type { Env } from '../../../core/config.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { oauth2 } from '../../../plugins/oauth2/index.ts';
import { persons } from '../../../plugins/persons/index.ts';
import { tokens } from '../../../plugins/tokens/index.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type CallOptions, startTestService } from '../../helpers/service.ts';

export const CLIENTS = '/oauth2/clients';

/**
 * A service with the persons, tokens and oauth2 plugins on a loopback port, its PUBLIC_BASE_URL that
 * port's URL, so an OAuth client library can run discovery against it and fetch the JWKS for real.
 */
export async function startOAuth2Service(o: { env?: Env; clock?: Clock; storage?: Storage } = {}) {
  let handle: (request: Request, peer?: string) => Promise<Response> = () =>
    Promise.resolve(new Response('starting', { status: 503 }));
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (request, srv) => handle(request, srv.requestIP(request)?.address),
  });
  const url = `http://127.0.0.1:${server.port}`;
  const t = await startTestService({
    definition: { plugins: [persons(), tokens(), oauth2()] },
    env: { PUBLIC_BASE_URL: url, ...o.env },
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.storage ? { storage: o.storage } : {}),
  });
  handle = t.service.fetchFrom;

  /** Creates a client through POST /oauth2/clients; answers the created client with its secret. */
  async function createClient(body: Record<string, unknown> = {}, as: CallOptions = {}) {
    const res = await t.call('POST', CLIENTS, {
      ...as,
      body: { client_name: 'Test', scopes: ['read', 'write'], grant_types: ['client_credentials'], ...body },
    });
    await expectStatus(res, 201);
    return res.json.result as { client_id: string; client_secret?: string; scopes: string[] };
  }

  /** A form POST to an OAuth endpoint over the loopback port. */
  function post(path: string, form: string | URLSearchParams, headers: Record<string, string> = {}) {
    return fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: String(form),
    });
  }

  return {
    ...t,
    url,
    createClient,
    post,
    async stop() {
      server.stop(true);
      await t.stop();
    },
  };
}

export type OAuth2TestService = Awaited<ReturnType<typeof startOAuth2Service>>;

/** The value of an Authorization header for HTTP Basic with RFC 6749 appendix B encoding. */
export const basic = (id: string, secret: string, encode = (s: string) => encodeURIComponent(s)) =>
  `Basic ${btoa(`${encode(id)}:${encode(secret)}`)}`;
