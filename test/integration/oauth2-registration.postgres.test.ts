import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { expectStatus } from '../helpers/expect-status.ts';
import { type OAuth2TestService, startOAuth2Service } from '../unit/oauth2/fixture.ts';
import {
  bearer,
  expectRegistrationError,
  issueToken,
  MCP_CLIENT,
  POLICY,
  postJson,
  setPolicy,
  TOKENS,
} from '../unit/oauth2/registration-fixture.ts';
import { isolatedPostgres } from './support.ts';

/**
 * Dynamic registration on Postgres, where requests run on a pool of connections at once: an initial
 * access token's uses, the open client limit and the rate per address hold under concurrent requests.
 */
let t: OAuth2TestService;
let drop: () => Promise<void>;

beforeAll(async () => {
  const pg = await isolatedPostgres('registration');
  drop = pg.drop;
  t = await startOAuth2Service({ storage: pg.storage });
});
afterAll(async () => {
  await t.stop();
  await drop();
});

const orgRegister = (orgId: string) => `/oauth2/organizations/${orgId}/register`;

describe('dynamic registration on Postgres', () => {
  it('lets ten concurrent registrations take exactly the three uses of a token', async () => {
    const { id, token } = await issueToken(t, { uses: 3 });
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => postJson(t, '/oauth2/register', MCP_CLIENT, bearer(token))),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(3);
    for (const r of answers.filter((a) => a.status !== 201))
      await expectRegistrationError(r, 401, 'invalid_token');
    const listed = (await t.call('GET', TOKENS)).json.result.find((x: { id: string }) => x.id === id);
    expect(listed.uses_left).toBe(0);
  });

  it('never goes past max_open_clients under concurrent open registrations', async () => {
    await setPolicy(t, { open_registration: true, max_open_clients: 3, per_address_per_hour: 1000 });
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => postJson(t, orgRegister(t.org.id), MCP_CLIENT)),
    );
    expect(answers.filter((r) => r.status === 201).length).toBeLessThanOrEqual(3);
    expect((await t.call('GET', POLICY)).json.result.open_clients).toBeLessThanOrEqual(3);
  });

  it('shares the rate per address across the pool: 429 with Retry-After past it', async () => {
    const org = await t.service.ctx.orgs.create('Rated');
    const as = { orgId: org.organization.id, key: org.apiKey };
    await setPolicy(t, { open_registration: true, per_address_per_hour: 2 }, as);
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => postJson(t, orgRegister(org.organization.id), MCP_CLIENT)),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(2);
    const limited = answers.filter((r) => r.status === 429);
    expect(limited).toHaveLength(3);
    expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('reads and deletes a registration with its token, which then stops working', async () => {
    const { token } = await issueToken(t);
    const made = await (await postJson(t, '/oauth2/register', MCP_CLIENT, bearer(token))).json();
    const uri = `${t.url}${new URL(made.registration_client_uri).pathname}`;
    const auth = bearer(made.registration_access_token);
    await expectStatus(await fetch(uri, { headers: auth }), 200);
    await expectStatus(await fetch(uri, { method: 'DELETE', headers: auth }), 204);
    await expectRegistrationError(await fetch(uri, { headers: auth }), 401, 'invalid_token');
  });
});
