import { expect } from 'bun:test';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { CallOptions } from '../../helpers/service.ts';
import type { OAuth2TestService } from './fixture.ts';

export const TOKENS = '/oauth2/registration-tokens';
export const POLICY = '/oauth2/registration-policy';

/** Issues an initial access token through the API (the test organization's key unless told). */
export async function issueToken(
  t: OAuth2TestService,
  body: { expires_in?: number; uses?: number } = {},
  as: CallOptions = {},
): Promise<{ id: string; token: string; expires_at: string }> {
  const res = await t.call('POST', TOKENS, { ...as, body });
  await expectStatus(res, 201);
  return res.json.result;
}

/** Sets the organization's open registration policy. */
export async function setPolicy(t: OAuth2TestService, body: Record<string, unknown>, as: CallOptions = {}) {
  const res = await t.call('PUT', POLICY, { ...as, body });
  await expectStatus(res, 200);
  return res.json.result;
}

/** POSTs client metadata as JSON to a registration endpoint over the loopback port. */
export function postJson(
  t: OAuth2TestService,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
  method = 'POST',
): Promise<Response> {
  return fetch(`${t.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/**
 * Asserts an RFC 7591 error answer: the status, `{error, error_description}` and the service's envelope
 * (`errors`, the same message) in one body, as the token endpoint answers, never cached. Answers the
 * description.
 */
export async function expectRegistrationError(res: Response, status: number, error: string): Promise<string> {
  const text = await res.text();
  await expectStatus({ status: res.status, text }, status);
  const body = JSON.parse(text);
  expect(body).toEqual({
    error,
    error_description: expect.any(String),
    errors: [{ httpcode: status, message: body.error_description }],
  });
  expect(res.headers.get('cache-control')).toBe('no-store');
  if (status === 401) expect(res.headers.get('www-authenticate')).toStartWith('Bearer error="invalid_token"');
  return body.error_description;
}

/** A public client's metadata as an MCP client sends it. */
export const MCP_CLIENT = {
  client_name: 'Agent CLI',
  redirect_uris: ['http://127.0.0.1:33418/callback'],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
};
