import { expect } from 'bun:test';
import type { Env } from '../../../core/config.ts';
import type { CapabilityMap } from '../../../core/contract/capabilities.ts';
import type { PluginDefinition } from '../../../core/plugin.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { type OAuth2Options, oauth2 } from '../../../plugins/oauth2/index.ts';
import { persons } from '../../../plugins/persons/index.ts';
import { tokens } from '../../../plugins/tokens/index.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type CallOptions, startTestService } from '../../helpers/service.ts';

export const CLIENTS = '/oauth2/clients';

/**
 * A service with the persons, tokens and oauth2 plugins on a loopback port, its PUBLIC_BASE_URL that
 * port's URL, so an OAuth client library can run discovery against it and fetch the JWKS for real.
 */
export async function startOAuth2Service(
  o: {
    env?: Env;
    clock?: Clock;
    storage?: Storage;
    plugins?: PluginDefinition<unknown, CapabilityMap, CapabilityMap>[];
    oauth2?: OAuth2Options;
  } = {},
) {
  let handle: (request: Request, peer?: string) => Promise<Response> = () =>
    Promise.resolve(new Response('starting', { status: 503 }));
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (request, srv) => handle(request, srv.requestIP(request)?.address),
  });
  const url = `http://127.0.0.1:${server.port}`;
  const t = await startTestService({
    definition: { plugins: [persons(), tokens(), oauth2(o.oauth2), ...(o.plugins ?? [])] },
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

/**
 * Asserts an OAuth error answer: the status, the envelope (errors with the status, meta.cursor_pagination)
 * with RFC 6749 error and error_description in the same body, never cached. Answers the description.
 */
export async function expectOAuthError(res: Response, status: number, error: string): Promise<string> {
  const text = await res.text();
  await expectStatus({ status: res.status, text }, status);
  const body = JSON.parse(text);
  expect(body).toEqual({
    errors: [{ httpcode: status, message: body.error_description }],
    meta: { cursor_pagination: { limit: 0, cursor: '', total_count: 0 } },
    error,
    error_description: expect.any(String),
  });
  expect(res.headers.get('cache-control')).toBe('no-store');
  if (status === 401)
    expect(res.headers.get('www-authenticate')).toBe('Basic realm="oauth2", charset="UTF-8"');
  return body.error_description;
}
