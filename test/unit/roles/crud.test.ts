import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { TestService } from '../../helpers/service.ts';
import { newPerson, seed, startRolesService } from './helpers.ts';

let t: TestService;
beforeAll(async () => {
  t = await startRolesService();
});
afterAll(() => t.stop());

const message = (res: { json: { errors: Array<{ message: string }> } }) => res.json.errors[0]!.message;

describe('permissions', () => {
  it('creates, lists, reads, changes and deletes one', async () => {
    const made = await t.call('POST', '/permissions', {
      body: { name: 'orders:read', description: 'Reads orders' },
    });
    await expectStatus(made, 201);
    expect(made.json.result).toEqual({ name: 'orders:read', description: 'Reads orders' });
    await expectStatus(await t.call('POST', '/permissions', { body: { name: 'billing.admin_1-x' } }), 201);

    const list = await t.call('GET', '/permissions');
    await expectStatus(list, 200);
    expect(list.json.result).toEqual([
      { name: 'billing.admin_1-x', description: '' },
      { name: 'orders:read', description: 'Reads orders' },
    ]);
    const one = await t.call('GET', '/permissions/orders:read');
    await expectStatus(one, 200);
    expect(one.json.result).toEqual({ name: 'orders:read', description: 'Reads orders' });

    const patched = await t.call('PATCH', '/permissions/orders:read', {
      body: { description: 'Lists orders' },
    });
    await expectStatus(patched, 200);
    expect(patched.json.result).toEqual({ name: 'orders:read', description: 'Lists orders' });
    await expectStatus(await t.call('DELETE', '/permissions/orders:read'), 204);
    await expectStatus(await t.call('GET', '/permissions/orders:read'), 404);
    await expectStatus(await t.call('DELETE', '/permissions/orders:read'), 404);
    await expectStatus(
      await t.call('PATCH', '/permissions/orders:read', { body: { description: 'x' } }),
      404,
    );
  });

  it('refuses an existing name with 409 and a bad name with 400 naming the rule', async () => {
    await expectStatus(await t.call('POST', '/permissions', { body: { name: 'dup' } }), 201);
    const again = await t.call('POST', '/permissions', { body: { name: 'dup', description: 'other' } });
    await expectStatus(again, 409);
    expect(message(again)).toContain('"dup" already exists');
    for (const name of ['a b', '', 'x'.repeat(129), '..', 'é', 'a/b', 42]) {
      const bad = await t.call('POST', '/permissions', { body: { name } });
      await expectStatus(bad, 400);
      expect(message(bad)).toContain('body.name');
    }
    await expectStatus(await t.call('POST', '/permissions', { body: { name: 'x'.repeat(128) } }), 201);
    const long = await t.call('POST', '/permissions', { body: { name: 'd', description: 'x'.repeat(1025) } });
    await expectStatus(long, 400);
    expect(message(long)).toContain('body.description');
    const path = await t.call('GET', '/permissions/a%20b');
    await expectStatus(path, 400);
    expect(message(path)).toContain('path parameter permission_name');
    await expectStatus(await t.call('POST', '/permissions', { body: [{ name: 'arr' }] }), 400);
  });

  it('refuses a description the database cannot keep as given with 400 naming it, never a 500', async () => {
    await seed(t, ['desc.kept'], 'desc-role');
    const bad = [
      ['a\u0000b', 'NUL'],
      ['a\ud800b', 'lone surrogate'],
      ['\ufeffTitle', 'U+FEFF'],
    ] as const;
    for (const [description, rule] of bad) {
      const writes = [
        t.call('POST', '/permissions', { body: { name: 'desc.new', description } }),
        t.call('PATCH', '/permissions/desc.kept', { body: { description } }),
        t.call('POST', '/roles', { body: { name: 'desc-new', description, permissions: [] } }),
        t.call('PATCH', '/roles/desc-role', { body: { description } }),
      ];
      for (const res of await Promise.all(writes)) {
        await expectStatus(res, 400);
        expect(message(res)).toContain('body.description');
        expect(message(res)).toContain(rule);
      }
    }
    // Nothing was written: the permission and the role keep their empty description.
    expect((await t.call('GET', '/permissions/desc.kept')).json.result.description).toBe('');
    expect((await t.call('GET', '/roles/desc-role')).json.result.description).toBe('');
    await expectStatus(await t.call('GET', '/permissions/desc.new'), 404);
    // A BOM inside the text, and characters beyond the BMP, are kept.
    const fine = await t.call('PATCH', '/permissions/desc.kept', { body: { description: 'a\ufeffb 😀' } });
    await expectStatus(fine, 200);
    expect((await t.call('GET', '/permissions/desc.kept')).json.result.description).toBe('a\ufeffb 😀');
    await expectStatus(await t.call('DELETE', '/roles/desc-role'), 204);
    await expectStatus(await t.call('DELETE', '/permissions/desc.kept'), 204);
  });
});

describe('roles', () => {
  it('creates a role of existing permissions, sorted and without repeats, and changes it', async () => {
    await seed(t, ['r.read', 'r.write', 'r.admin']);
    const made = await t.call('POST', '/roles', {
      body: { name: 'editor', description: 'Edits', permissions: ['r.write', 'r.read', 'r.write'] },
    });
    await expectStatus(made, 201);
    expect(made.json.result).toEqual({
      name: 'editor',
      description: 'Edits',
      permissions: ['r.read', 'r.write'],
    });
    await expectStatus(await t.call('POST', '/roles', { body: { name: 'empty', permissions: [] } }), 201);
    const list = await t.call('GET', '/roles');
    expect(list.json.result.map((r: { name: string }) => r.name)).toEqual(['editor', 'empty']);
    expect((await t.call('GET', '/roles/empty')).json.result).toEqual({
      name: 'empty',
      description: '',
      permissions: [],
    });

    const patched = await t.call('PATCH', '/roles/editor', { body: { permissions: ['r.admin'] } });
    await expectStatus(patched, 200);
    expect(patched.json.result).toEqual({ name: 'editor', description: 'Edits', permissions: ['r.admin'] });
    const described = await t.call('PATCH', '/roles/editor', { body: { description: 'Administers' } });
    expect(described.json.result).toEqual({
      name: 'editor',
      description: 'Administers',
      permissions: ['r.admin'],
    });
    await expectStatus(await t.call('DELETE', '/roles/empty'), 204);
    await expectStatus(await t.call('GET', '/roles/empty'), 404);
    await expectStatus(await t.call('DELETE', '/roles/empty'), 404);
    await expectStatus(await t.call('PATCH', '/roles/empty', { body: { description: 'x' } }), 404);
  });

  it('refuses unknown permissions with 400 naming them, and an existing name with 409', async () => {
    await seed(t, ['k.one']);
    const unknown = await t.call('POST', '/roles', {
      body: { name: 'ghost', permissions: ['k.one', 'k.two', 'k.three'] },
    });
    await expectStatus(unknown, 400);
    expect(message(unknown)).toBe(
      'body.permissions: no permission "k.three", "k.two" in this organization; create them first with POST /permissions',
    );
    await expectStatus(await t.call('GET', '/roles/ghost'), 404);
    await expectStatus(await t.call('POST', '/roles', { body: { name: 'kr', permissions: ['k.one'] } }), 201);
    await expectStatus(await t.call('POST', '/roles', { body: { name: 'kr', permissions: [] } }), 409);
    const patch = await t.call('PATCH', '/roles/kr', { body: { permissions: ['k.nope'] } });
    await expectStatus(patch, 400);
    expect(message(patch)).toContain('"k.nope"');
    expect((await t.call('GET', '/roles/kr')).json.result.permissions).toEqual(['k.one']);
    const missing = await t.call('POST', '/roles', { body: { name: 'np' } });
    await expectStatus(missing, 400);
    expect(message(missing)).toContain('body.permissions');
  });
});

describe('bodies', () => {
  it('refuse a member they do not take, and a rename, with 400 naming it: never a 200 that changed nothing', async () => {
    await seed(t, ['m.read'], 'm-role');
    const id = await newPerson(t);
    const cases: Array<[string, string, unknown, string]> = [
      [
        'POST',
        '/permissions',
        { name: 'm.new', descripton: 'x' },
        'body.descripton: is not a member of this body (accepted: name, description)',
      ],
      [
        'PATCH',
        '/permissions/m.read',
        { descripton: 'x' },
        'body.descripton: is not a member of this body (accepted: description)',
      ],
      [
        'PATCH',
        '/permissions/m.read',
        { name: 'm.renamed' },
        'body.name: cannot be changed: it names the permission',
      ],
      [
        'POST',
        '/roles',
        { name: 'm-new', permissions: [], role: 'x' },
        'body.role: is not a member of this body (accepted: name, description, permissions)',
      ],
      [
        'PATCH',
        '/roles/m-role',
        { permission: ['m.read'] },
        'body.permission: is not a member of this body (accepted: description, permissions)',
      ],
      ['PATCH', '/roles/m-role', { name: 'm-renamed' }, 'body.name: cannot be changed: it names the role'],
      [
        'PUT',
        `/persons/${id}/roles`,
        { roles: [], role: 'm-role' },
        'body.role: is not a member of this body (accepted: roles)',
      ],
      [
        'PUT',
        `/persons/${id}/additional-permissions`,
        { permissions: [], add: ['m.read'] },
        'body.add: is not a member of this body (accepted: permissions)',
      ],
    ];
    for (const [method, path, body, text] of cases) {
      const res = await t.call(method, path, { body });
      await expectStatus(res, 400);
      expect({ method, path, message: message(res) }).toEqual({
        method,
        path,
        message: expect.stringContaining(text),
      });
    }
    await expectStatus(await t.call('GET', '/permissions/m.new'), 404);
    await expectStatus(await t.call('GET', '/permissions/m.renamed'), 404);
    await expectStatus(await t.call('GET', '/roles/m-renamed'), 404);
    await expectStatus(await t.call('GET', '/roles/m-new'), 404);
    await expectStatus(await t.call('DELETE', '/roles/m-role'), 204);
    await expectStatus(await t.call('DELETE', '/permissions/m.read'), 204);
  });
});

describe("a person's roles and permissions", () => {
  it('sets roles and additional permissions and answers the effective permissions', async () => {
    await seed(t, ['p.read', 'p.write'], 'p-writer');
    await seed(t, ['p.audit', 'p.export'], 'p-auditor');
    const id = await newPerson(t);
    expect((await t.call('GET', `/persons/${id}/roles`)).json.result).toEqual([]);
    const put = await t.call('PUT', `/persons/${id}/roles`, {
      body: { roles: ['p-writer', 'p-auditor', 'p-writer'] },
    });
    await expectStatus(put, 204);
    expect(put.text).toBe('');
    expect((await t.call('GET', `/persons/${id}/roles`)).json.result).toEqual(['p-auditor', 'p-writer']);
    await expectStatus(
      await t.call('PUT', `/persons/${id}/additional-permissions`, {
        body: { permissions: ['p.read', 'r.read'] },
      }),
      204,
    );
    expect((await t.call('GET', `/persons/${id}/additional-permissions`)).json.result).toEqual([
      'p.read',
      'r.read',
    ]);
    const effective = await t.call('GET', `/persons/${id}/permissions`);
    await expectStatus(effective, 200);
    expect(effective.json.result).toEqual(['p.audit', 'p.export', 'p.read', 'p.write', 'r.read']);

    await expectStatus(await t.call('PUT', `/persons/${id}/roles`, { body: { roles: [] } }), 204);
    expect((await t.call('GET', `/persons/${id}/permissions`)).json.result).toEqual(['p.read', 'r.read']);
    await expectStatus(
      await t.call('PUT', `/persons/${id}/additional-permissions`, { body: { permissions: [] } }),
      204,
    );
    expect((await t.call('GET', `/persons/${id}/permissions`)).json.result).toEqual([]);
  });

  it('refuses unknown roles and permissions with 400 naming them, and changes nothing', async () => {
    const id = await newPerson(t);
    await expectStatus(await t.call('PUT', `/persons/${id}/roles`, { body: { roles: ['p-writer'] } }), 204);
    const roles = await t.call('PUT', `/persons/${id}/roles`, {
      body: { roles: ['p-writer', 'no-such-role'] },
    });
    await expectStatus(roles, 400);
    expect(message(roles)).toContain('body.roles: no role "no-such-role"');
    const perms = await t.call('PUT', `/persons/${id}/additional-permissions`, {
      body: { permissions: ['nope'] },
    });
    await expectStatus(perms, 400);
    expect(message(perms)).toContain('body.permissions: no permission "nope"');
    expect((await t.call('GET', `/persons/${id}/roles`)).json.result).toEqual(['p-writer']);
    const badName = await t.call('PUT', `/persons/${id}/roles`, { body: { roles: ['a b'] } });
    await expectStatus(badName, 400);
    expect(message(badName)).toContain('body.roles[0]');
    await expectStatus(await t.call('PUT', `/persons/${id}/roles`, { body: { roles: 'p-writer' } }), 400);
    await expectStatus(await t.call('PUT', `/persons/${id}/roles`, { body: {} }), 400);
  });

  it('names the first ten of many unknown names and counts the rest, not all 1000', async () => {
    const id = await newPerson(t);
    const ghosts = Array.from(
      { length: 1000 },
      (_, i) => `ghost-${String(i).padStart(4, '0')}-${'x'.repeat(100)}`,
    );
    const roles = await t.call('PUT', `/persons/${id}/roles`, { body: { roles: ghosts } });
    await expectStatus(roles, 400);
    const named = ghosts
      .slice(0, 10)
      .map((n) => JSON.stringify(n))
      .join(', ');
    expect(message(roles)).toBe(
      `body.roles: no role ${named} and 990 more in this organization; create them first with POST /roles`,
    );
    const role = await t.call('POST', '/roles', {
      body: { name: 'ghostly', permissions: ghosts.slice(0, 11) },
    });
    await expectStatus(role, 400);
    expect(message(role)).toContain(`${JSON.stringify(ghosts[9])} and 1 more in this organization`);
  });

  it('answers 404 for an unknown person and 400 for an ID that is no UUID', async () => {
    const nobody = '0190a2b4-0000-7000-8000-000000000000';
    for (const path of ['roles', 'additional-permissions', 'permissions'])
      await expectStatus(await t.call('GET', `/persons/${nobody}/${path}`), 404);
    await expectStatus(await t.call('PUT', `/persons/${nobody}/roles`, { body: { roles: [] } }), 404);
    await expectStatus(
      await t.call('PUT', `/persons/${nobody}/additional-permissions`, { body: { permissions: [] } }),
      404,
    );
    const bad = await t.call('GET', '/persons/not-a-uuid/roles');
    await expectStatus(bad, 400);
    expect(message(bad)).toContain('path parameter person_id must be a UUID');
  });
});

describe('deleting a permission or a role', () => {
  it('takes it out of every role and person', async () => {
    await seed(t, ['d.keep', 'd.drop'], 'd-role');
    await seed(t, ['d.other'], 'd-gone');
    const id = await newPerson(t);
    await expectStatus(
      await t.call('PUT', `/persons/${id}/roles`, { body: { roles: ['d-role', 'd-gone'] } }),
      204,
    );
    await expectStatus(
      await t.call('PUT', `/persons/${id}/additional-permissions`, {
        body: { permissions: ['d.drop', 'd.keep'] },
      }),
      204,
    );
    await expectStatus(await t.call('DELETE', '/permissions/d.drop'), 204);
    expect((await t.call('GET', '/roles/d-role')).json.result.permissions).toEqual(['d.keep']);
    expect((await t.call('GET', `/persons/${id}/additional-permissions`)).json.result).toEqual(['d.keep']);
    expect((await t.call('GET', `/persons/${id}/permissions`)).json.result).toEqual(['d.keep', 'd.other']);

    await expectStatus(await t.call('DELETE', '/roles/d-gone'), 204);
    expect((await t.call('GET', `/persons/${id}/roles`)).json.result).toEqual(['d-role']);
    expect((await t.call('GET', `/persons/${id}/permissions`)).json.result).toEqual(['d.keep']);
    // The names are free again.
    await expectStatus(await t.call('POST', '/permissions', { body: { name: 'd.drop' } }), 201);
    await expectStatus(await t.call('POST', '/roles', { body: { name: 'd-gone', permissions: [] } }), 201);
    expect((await t.call('GET', `/persons/${id}/roles`)).json.result).toEqual(['d-role']);
  });
});

describe('the organization settings', () => {
  it('keeps roles_in_tokens, false until set', async () => {
    expect((await t.call('GET', '/organizations/roles-settings')).json.result).toEqual({
      roles_in_tokens: false,
    });
    const put = await t.call('PUT', '/organizations/roles-settings', { body: { roles_in_tokens: true } });
    await expectStatus(put, 200);
    expect(put.json.result).toEqual({ roles_in_tokens: true });
    expect((await t.call('GET', '/organizations/roles-settings')).json.result).toEqual({
      roles_in_tokens: true,
    });
    const bad = await t.call('PUT', '/organizations/roles-settings', { body: { roles_in_tokens: 'yes' } });
    await expectStatus(bad, 400);
    expect(message(bad)).toContain('body.roles_in_tokens');
  });
});

describe('the OpenAPI document', () => {
  it('lists every route of the roles and consents plugins with its operation, tags and body schema', async () => {
    const doc = await t.call('GET', '/openapi.json');
    await expectStatus(doc, 200);
    const ops: Array<[string, string, string]> = [
      ['/permissions', 'post', 'PostPermissions'],
      ['/permissions/{permission_name}', 'delete', 'DeletePermissionsPermissionName'],
      ['/roles', 'post', 'PostRoles'],
      ['/roles/{role_name}', 'patch', 'PatchRolesRoleName'],
      ['/persons/{person_id}/roles', 'put', 'PutPersonsPersonIdRoles'],
      ['/persons/{person_id}/additional-permissions', 'get', 'GetPersonsPersonIdAdditionalPermissions'],
      ['/persons/{person_id}/permissions', 'get', 'GetPersonsPersonIdPermissions'],
      ['/persons/{person_id}/consent/gdpr', 'put', 'PutPersonsPersonIdConsentGdpr'],
      ['/organizations/roles-settings', 'put', 'PutOrganizationsRolesSettings'],
    ];
    for (const [path, method, operationId] of ops) {
      const op = doc.json.paths[path]?.[method];
      expect({ path, operationId: op?.operationId }).toEqual({ path, operationId });
      expect(op.tags.length).toBeGreaterThan(0);
    }
    const role = doc.json.paths['/roles'].post.requestBody.content['application/json'].schema;
    expect(role.required).toEqual(expect.arrayContaining(['name', 'permissions']));
    // The name rule is in the document, not only in the prose: a client can check a name before sending it.
    const pattern = '^[A-Za-z0-9.:_-]{1,128}$';
    expect(role.properties.name.pattern).toBe(pattern);
    expect(role.properties.permissions.items.pattern).toBe(pattern);
    const permission = doc.json.paths['/permissions'].post.requestBody.content['application/json'].schema;
    expect(permission.properties.name.pattern).toBe(pattern);
    const held = doc.json.paths['/persons/{person_id}/roles'].put.requestBody.content['application/json'];
    expect(held.schema.properties.roles.items.pattern).toBe(pattern);
    const consent =
      doc.json.paths['/persons/{person_id}/consent/gdpr'].put.requestBody.content['application/json'];
    expect(consent.schema.properties.consent_levels.items.enum).toEqual([
      'none',
      'necessary',
      'analytics',
      'marketing',
      'retargeting',
      'tracking',
    ]);
  });
});
