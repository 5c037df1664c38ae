import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { CallOptions } from '../../helpers/service.ts';
import { CLIENTS, type OAuth2TestService, startOAuth2Service } from './fixture.ts';

let t: OAuth2TestService;
let other: CallOptions;
let clientId: string;
beforeAll(async () => {
  t = await startOAuth2Service();
  const { organization, apiKey } = await t.service.ctx.orgs.create('Other');
  other = { orgId: organization.id, key: apiKey };
  clientId = (await t.createClient()).client_id;
});
afterAll(() => t.stop());

const path = (id: string) => `${CLIENTS}/${id}/ui-configuration`;
const put = (body: unknown, id = clientId, as: CallOptions = {}) => t.call('PUT', path(id), { ...as, body });

/** A 400 whose message names `where` and `rule`. */
async function expectRefused(body: unknown, where: string, rule: string) {
  const res = await put(body);
  await expectStatus(res, 400);
  const message: string = res.json.errors[0].message;
  if (!message.includes(where) || !message.includes(rule))
    throw new Error(`expected "${where}" and "${rule}" in the message, got ${res.text}`);
}

const FULL = {
  pageTitle: 'Acme </title><script>alert(1)</script>',
  pageBackgroundColor: '#0f172a',
  logoUrl: 'https://cdn.acme.example/logo.png?a="b"',
  faviconUrl: 'http://127.0.0.1:8080/favicon.ico',
  supportURL: 'https://acme.example/help',
  alternativeAuthURL: 'https://acme.example/other',
  textOverrides: { submit: 'Continue', unknown_key: 'kept' },
  themeVars: { '--primary': '#fff' },
  handleTypes: ['email_address', 'username'],
  dynamicFlowEnabled: true,
  dynamicFlowConfig: { steps: [{ kind: 'x' }] },
  showBadge: false,
  storeLastFactor: true,
  somethingNew: { nested: [1, 'two', null] },
};

describe('a client hosted-UI configuration', () => {
  it('answers {} before one is set, then stores and answers a full one with 201', async () => {
    const before = await t.call('GET', path(clientId));
    await expectStatus(before, 200);
    expect(before.json.result).toEqual({});

    const res = await put(FULL);
    await expectStatus(res, 201);
    expect(res.json.result).toEqual(FULL);
    const got = await t.call('GET', path(clientId));
    await expectStatus(got, 200);
    expect(got.json.result).toEqual(FULL);
  });

  it('replaces the whole configuration: members left out are gone', async () => {
    await expectStatus(await put(FULL), 201);
    await expectStatus(await put({ pageTitle: 'Only this' }), 201);
    const got = await t.call('GET', path(clientId));
    await expectStatus(got, 200);
    expect(got.json.result).toEqual({ pageTitle: 'Only this' });
  });

  it('takes the consistency headers like other client writes', async () => {
    const res = await t.call('PUT', path(clientId), {
      body: { showBadge: true },
      headers: { 'Service-Required-Consistency': 'all_regions' },
    });
    await expectStatus(res, 201);
    const bad = await t.call('PUT', path(clientId), {
      body: { showBadge: true },
      headers: { 'Service-Required-Consistency': 'everywhere' },
    });
    await expectStatus(bad, 400);
  });

  it("is a 404 for another organization's client and for an unknown one", async () => {
    for (const res of [
      await t.call('GET', path(clientId), other),
      await put({ pageTitle: 'x' }, clientId, other),
      await t.call('GET', path('0197a3c0-0000-7000-8000-000000000000')),
      await put({ pageTitle: 'x' }, 'not-a-uuid'),
    ])
      await expectStatus(res, 404);
  });

  it('is deleted with its client', async () => {
    const id = (await t.createClient()).client_id;
    await expectStatus(await put({ pageTitle: 'Gone soon' }, id), 201);
    await expectStatus(await t.call('DELETE', `${CLIENTS}/${id}`), 204);
    await expectStatus(await t.call('GET', path(id)), 404);
  });

  it.each([
    [[], 'body', 'must be a JSON object'],
    [{ pageTitle: 7 }, 'body.pageTitle', 'must be a string'],
    [{ pageTitle: '' }, 'body.pageTitle', 'must not be empty'],
    [{ pageTitle: 'x'.repeat(121) }, 'body.pageTitle', 'at most 120 characters'],
    [{ pageTitle: 'a\nb' }, 'body.pageTitle', 'control characters'],
    [{ showBadge: 'yes' }, 'body.showBadge', 'must be true or false'],
    [{ logoUrl: 'http://cdn.example/logo.png' }, 'body.logoUrl', 'must use https'],
    [{ faviconUrl: 'javascript:alert(1)' }, 'body.faviconUrl', 'must use https'],
    [{ supportURL: 'help' }, 'body.supportURL', 'must be an absolute URL'],
    [{ logoUrl: 'https://a"b.example/x' }, 'body.logoUrl', 'must name a host'],
    [{ logoUrl: 'https://a;b.example/x' }, 'body.logoUrl', 'must name a host'],
    [{ alternativeAuthURL: 'https://u:p@acme.example/' }, 'body.alternativeAuthURL', 'user name'],
    [{ pageBackgroundColor: 'red;}body{background:url(x)' }, 'body.pageBackgroundColor', 'CSS colour'],
    [{ pageBackgroundColor: 'rgb(300, 0, 0)' }, 'body.pageBackgroundColor', 'CSS colour'],
    [{ pageBackgroundColor: 'expression(alert(1))' }, 'body.pageBackgroundColor', 'CSS colour'],
    [{ textOverrides: { submit: 1 } }, 'body.textOverrides.submit', 'must be a string'],
    [{ textOverrides: ['a'] }, 'body.textOverrides', 'must be a JSON object'],
    [{ themeVars: 'x' }, 'body.themeVars', 'must be an object of strings'],
    [{ handleTypes: ['email'] }, 'body.handleTypes[0]', 'must be one of email_address'],
    [{ handleTypes: [] }, 'body.handleTypes', 'at least one'],
    [{ dynamicFlowConfig: null }, 'body.dynamicFlowConfig', 'must be a JSON object'],
    [{ extra: { a: 'nul\u0000' } }, 'body.extra.a', 'without U+0000'],
  ])('refuses %j with 400 naming %s', async (body, where, rule) => {
    await expectRefused(body, where, rule);
  });

  it('refuses a body over 16 KiB as a whole, whatever members carry it', async () => {
    await expectRefused({ somethingNew: 'x'.repeat(17_000) }, 'body', 'at most 16384 bytes');
  });

  it.each(['#abc', '#ABCDEF', '#11223344', 'rgb(1, 2, 3)', 'rgba(0,0,0,0.5)', 'Transparent', 'whitesmoke'])(
    'takes the colour %s',
    async (color) => {
      await expectStatus(await put({ pageBackgroundColor: color }), 201);
    },
  );

  it('is in the OpenAPI document under the reference operationIds', async () => {
    const doc = await t.call('GET', '/openapi.json');
    await expectStatus(doc, 200);
    const ops = doc.json.paths['/oauth2/clients/{oauth_client_id}/ui-configuration'];
    expect(ops.get.operationId).toBe('GetOauth2UiConfiguration');
    expect(ops.put.operationId).toBe('PutOauth2UiConfiguration');
    expect(Object.keys(ops.put.responses)).toContain('201');
  });
});
