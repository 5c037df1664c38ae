import { decodeJwt } from 'jose';
import type { Env } from '../../core/config.ts';
import type { PluginDefinition } from '../../core/plugin.ts';
import type { Clock } from '../../core/ports/clock.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { emailCodes } from '../../plugins/email-codes/index.ts';
import { factors } from '../../plugins/factors/index.ts';
import { type PasskeyOptions, passkeys } from '../../plugins/passkeys/index.ts';
import { type PasswordOptions, password } from '../../plugins/password/index.ts';
import { persons } from '../../plugins/persons/index.ts';
import { type TokensOptions, tokens } from '../../plugins/tokens/index.ts';
import { expectStatus } from './expect-status.ts';
import type { CallOptions, CallResult } from './service.ts';
import { startWebhookService, type WebhookTestService } from './webhooks.ts';

/** The identity plugins of the default deployment: persons, tokens, password, factors, passkeys, email codes. */
export const identityPlugins = (
  o: { password?: PasswordOptions; tokens?: TokensOptions; passkeys?: PasskeyOptions } = {},
) => [persons(), tokens(o.tokens), password(o.password), factors(), passkeys(o.passkeys), emailCodes()];

/** The claims every identity token carries; what is left of a token's claims are the custom ones. */
const STANDARD_CLAIMS = [
  'iss',
  'sub',
  'aud',
  'oid',
  'person_id',
  'authenticated_methods',
  'first_token',
  'jti',
  'iat',
  'exp',
  'groups',
];

/** The custom claims of an identity token's payload (those a hook or mint-token added). */
export function customClaims(claims: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(claims).filter(([k]) => !STANDARD_CLAIMS.includes(k)));
}

type Caller = { call(method: string, path: string, o?: CallOptions): Promise<CallResult> };

/** What `createPerson` made: the person's ID and the handle it signs in with. */
export interface MadePerson {
  personId: string;
  handle: { type: 'username'; value: string };
  password: string;
}

let seq = 0;

/** Creates a person through POST /persons and sets its password through the credentials route. */
export async function createPerson(
  t: Caller,
  o: CallOptions = {},
  groups: string[] = [],
): Promise<MadePerson> {
  const handle = { type: 'username' as const, value: `person-${process.pid}-${++seq}` };
  const made = await t.call('POST', '/persons', { ...o, body: { handles: [handle], groups } });
  await expectStatus(made, 201);
  const personId: string = made.json.result.person_id;
  const secret = `correct horse battery ${seq}`;
  await expectStatus(
    await t.call('PUT', `/persons/${personId}/credentials/password`, { ...o, body: { password: secret } }),
    204,
  );
  return { personId, handle, password: secret };
}

/** A sign-in's answer, with the token's claims (decoded, not verified) when it succeeded. */
export type SignInResult = CallResult & { claims: Record<string, unknown> | undefined };

/** Signs a person in with POST /authenticate/password (OrgID only, as an end user's client calls it). */
export async function signIn(
  t: Caller,
  person: Pick<MadePerson, 'handle' | 'password'>,
  o: CallOptions = {},
): Promise<SignInResult> {
  const res = await t.call('POST', '/authenticate/password', {
    ...o,
    key: null,
    body: { handle: person.handle, password: person.password },
  });
  const token = res.status === 200 ? (res.json?.result?.token as string | undefined) : undefined;
  return { ...res, claims: token ? decodeJwt(token) : undefined };
}

/** A WebhookTestService that can also call over its loopback port. */
export interface IdentityTestService extends WebhookTestService {
  http(method: string, path: string, o?: CallOptions): Promise<CallResult>;
}

/**
 * A service with the real identity plugins beside webhooks (its workers started), served on a loopback
 * port so jose can fetch /.well-known/jwks.json, able to deliver to HTTPS receivers on *.hooks.test.
 * Client addresses come from X-Forwarded-For.
 */
export async function startIdentityService(
  o: {
    env?: Env;
    storage?: Storage;
    plugins?: PluginDefinition[];
    password?: PasswordOptions;
    clock?: Clock;
  } = {},
): Promise<
  WebhookTestService & { http(method: string, path: string, o?: CallOptions): Promise<CallResult> }
> {
  const t = await startWebhookService({
    plugins: [...identityPlugins({ password: o.password ?? {} }), ...(o.plugins ?? [])],
    env: { TRUSTED_PROXY_HOPS: '1', LOG_LEVEL: 'error', ...o.env },
    ...(o.storage ? { storage: o.storage } : {}),
    ...(o.clock ? { clock: o.clock } : {}),
  });
  /** As `call`, but over the loopback port: the request crosses a real socket. */
  async function http(method: string, path: string, c: CallOptions = {}): Promise<CallResult> {
    const headers = new Headers(c.headers);
    const orgId = c.orgId === undefined ? t.org.id : c.orgId;
    const key = c.key === undefined ? t.apiKey : c.key;
    if (orgId !== null) headers.set(t.names.orgId, orgId);
    if (key !== null) headers.set(t.names.apiKey, key);
    let body: BodyInit | undefined = c.raw;
    if (c.body !== undefined) {
      headers.set('content-type', 'application/json');
      body = JSON.stringify(c.body);
    }
    const res = await fetch(`${t.baseUrl}${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json };
  }
  return Object.assign(t, { http });
}

/**
 * Issues a token as a sign-in does, for the organization `o` names (the test organization by default):
 * a fresh person made through the API, its password set, then POST /authenticate/password. 200 with the
 * token (and its claims), or the hook's error.
 */
export async function issueToken(t: Caller, o: CallOptions = {}): Promise<SignInResult> {
  const person = await createPerson(t, o);
  return signIn(t, person, o);
}
