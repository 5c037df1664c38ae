import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { expectStatus } from '../../helpers/expect-status.ts';
import { PATH, startSsoService } from './fixture.ts';

let t: Awaited<ReturnType<typeof startSsoService>>;
beforeAll(async () => {
  t = await startSsoService();
});
afterAll(() => t.stop());

const create = (body: Record<string, unknown>) => t.call('POST', PATH, { body });
const patch = (id: string, body: Record<string, unknown>) => t.call('PATCH', `${PATH}/${id}`, { body });

describe('SSO credentials: the reference deprecated external_cred', () => {
  it('stores external_cred as external_cred_id on create and on modify', async () => {
    const made = await create({
      client_id: 'ex1',
      client_secret: 's',
      provider: 'github',
      external_cred: 'legacy-1',
    });
    await expectStatus(made, 201);
    expect(made.json.result.external_cred_id).toBe('legacy-1');
    const changed = await patch('ex1', { external_cred: 'legacy-2' });
    await expectStatus(changed, 200);
    expect(changed.json.result.external_cred_id).toBe('legacy-2');
    const read = await t.call('GET', `${PATH}/ex1`);
    await expectStatus(read, 200);
    expect(read.json.result.external_cred_id).toBe('legacy-2');
  });

  it('takes both names when they agree, and refuses them with 400 naming both when they differ', async () => {
    const same = await create({
      client_id: 'ex2',
      client_secret: 's',
      provider: 'github',
      external_cred: 'same',
      external_cred_id: 'same',
    });
    await expectStatus(same, 201);
    expect(same.json.result.external_cred_id).toBe('same');
    const differ = await create({
      client_id: 'ex3',
      client_secret: 's',
      provider: 'github',
      external_cred: 'a',
      external_cred_id: 'b',
    });
    await expectStatus(differ, 400);
    expect(differ.text).toContain('body.external_cred');
    expect(differ.text).toContain('body.external_cred_id');
    await expectStatus(await t.call('GET', `${PATH}/ex3`), 404);
    const patched = await patch('ex2', { external_cred: 'a', external_cred_id: 'b' });
    await expectStatus(patched, 400);
    expect(patched.text).toContain('body.external_cred_id');
  });

  it('documents external_cred as deprecated in the OpenAPI document', async () => {
    const doc = await t.call('GET', '/openapi.json');
    await expectStatus(doc, 200);
    const op = doc.json.paths[PATH].post;
    const schema = op.requestBody.content['application/json'].schema;
    expect(schema.properties.external_cred.deprecated).toBe(true);
  });
});

describe('SSO credentials: members the operation does not take', () => {
  it('refuses an unknown member of a create, naming it and the accepted ones', async () => {
    const res = await create({ client_id: 'u1', client_secret: 's', provider: 'github', extra: 1 });
    await expectStatus(res, 400);
    expect(res.text).toContain('body.extra');
    expect(res.text).toContain('client_secret');
    await expectStatus(await t.call('GET', `${PATH}/u1`), 404);
  });

  it('refuses provider and client_id in a modify: they cannot be changed', async () => {
    await expectStatus(await create({ client_id: 'fixed', client_secret: 's', provider: 'github' }), 201);
    for (const body of [{ provider: 'google' }, { client_id: 'other' }]) {
      const res = await patch('fixed', body);
      await expectStatus(res, 400);
      expect(res.text).toContain(`body.${Object.keys(body)[0]}`);
      expect(res.text).toContain('cannot be changed');
    }
    const read = await t.call('GET', `${PATH}/fixed`);
    await expectStatus(read, 200);
    expect(read.json.result).toMatchObject({ client_id: 'fixed', provider: 'github' });
  });

  it('refuses an unknown member of a modify, naming it', async () => {
    const res = await patch('fixed', { lable: 'typo' });
    await expectStatus(res, 400);
    expect(res.text).toContain('body.lable');
    expect(res.text).toContain('label');
  });

  it('refuses a query parameter on every route, naming it and the accepted ones', async () => {
    const list = await t.call('GET', `${PATH}?foo=1`);
    await expectStatus(list, 400);
    expect(list.text).toContain('query.foo: is not a parameter of this operation (accepted: oauth_provider)');
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      const res = await t.call(
        method,
        `${PATH}/fixed?foo=1`,
        method === 'PATCH' ? { body: { label: 'x' } } : {},
      );
      await expectStatus(res, 400);
      expect(res.text).toContain('query.foo: is not a parameter of this operation (it takes none)');
    }
    await expectStatus(await t.call('GET', `${PATH}/fixed`), 200);
  });

  it("takes the reference's enable_in_slashid_oidc_authz_server as the flag's other name", async () => {
    const made = await create({
      client_id: 'vendor-flag',
      client_secret: 's',
      provider: 'github',
      enable_in_slashid_oidc_authz_server: true,
    });
    await expectStatus(made, 201);
    expect(made.json.result.enable_in_service_oidc_authz_server).toBe(true);
    const off = await patch('vendor-flag', { enable_in_slashid_oidc_authz_server: false });
    await expectStatus(off, 200);
    expect(off.json.result.enable_in_service_oidc_authz_server).toBe(false);
  });

  it('answers a path parameter that is not valid percent-encoding with a clear 400', async () => {
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      const res = await t.call(method, `${PATH}/a%b`, method === 'PATCH' ? { body: { label: 'x' } } : {});
      await expectStatus(res, 400);
      expect(res.text).toContain('not valid percent-encoding');
      expect(res.text).toContain('oauth_client_id');
      expect(res.text).not.toContain('null');
    }
  });
});
