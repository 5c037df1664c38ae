import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { CallResult, TestService } from '../../helpers/service.ts';
import { newPerson, seed, startRolesService } from './helpers.ts';

let t: TestService;
beforeAll(async () => {
  t = await startRolesService();
  await seed(t, ['docs:read', 'docs:write'], 'editor');
  await seed(t, ['docs:admin'], 'admin');
});
afterAll(() => t.stop());

const message = (res: CallResult) => res.json.errors[0]!.message as string;

// The two lists a PUT with If-Match replaces, each with the body member it takes and names it holds.
const lists = [
  { path: 'roles', member: 'roles', a: ['editor'], b: ['admin'] },
  { path: 'additional-permissions', member: 'permissions', a: ['docs:read'], b: ['docs:write'] },
] as const;

async function read(id: string, path: string) {
  const res = await t.call('GET', `/persons/${id}/${path}`);
  await expectStatus(res, 200);
  const etag = res.headers.get('etag');
  if (!etag) throw new Error(`GET /persons/${id}/${path} answered no ETag: ${res.text}`);
  return { etag, names: res.json.result as string[] };
}

const put = (id: string, path: string, body: object, ifMatch?: string) =>
  t.call('PUT', `/persons/${id}/${path}`, { body, ...(ifMatch ? { headers: { 'if-match': ifMatch } } : {}) });

describe.each(lists)('PUT /persons/{id}/$path with If-Match', ({ path, member, a, b }) => {
  it('answers the GET with a strong ETag that changes with the state', async () => {
    const id = await newPerson(t);
    const before = await read(id, path);
    expect(before.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect((await read(id, path)).etag).toBe(before.etag);
    await expectStatus(await put(id, path, { [member]: a }), 204);
    const after = await read(id, path);
    expect(after.names).toEqual([...a]);
    expect(after.etag).not.toBe(before.etag);
  });

  it('writes when If-Match names the current ETag, and answers the new one', async () => {
    const id = await newPerson(t);
    const { etag } = await read(id, path);
    const res = await put(id, path, { [member]: a }, etag);
    await expectStatus(res, 204);
    const now = await read(id, path);
    expect(now.names).toEqual([...a]);
    expect(res.headers.get('etag')).toBe(now.etag);
  });

  it('answers 412 in the envelope for a stale or unknown ETag, and writes nothing', async () => {
    const id = await newPerson(t);
    const stale = (await read(id, path)).etag;
    await expectStatus(await put(id, path, { [member]: a }, stale), 204);
    for (const ifMatch of [stale, '"nope"', `W/${(await read(id, path)).etag}`]) {
      const res = await put(id, path, { [member]: b }, ifMatch);
      await expectStatus(res, 412);
      expect(res.json.errors).toEqual([{ httpcode: 412, message: expect.stringContaining('If-Match') }]);
      expect((await read(id, path)).names).toEqual([...a]);
    }
  });

  it('checks nothing without If-Match, and * matches any state of a person', async () => {
    const id = await newPerson(t);
    await expectStatus(await put(id, path, { [member]: a }), 204);
    await expectStatus(await put(id, path, { [member]: b }, '*'), 204);
    expect((await read(id, path)).names).toEqual([...b]);
  });

  it('refuses an If-Match that is not a quoted entity tag with 400 naming the header', async () => {
    const id = await newPerson(t);
    const res = await put(id, path, { [member]: a }, 'nope');
    await expectStatus(res, 400);
    expect(message(res)).toContain('header If-Match: must be * or a comma-separated list of quoted');
    expect((await read(id, path)).names).toEqual([]);
  });

  it('lets one of two writers holding the same ETag win; the other gets 412', async () => {
    const id = await newPerson(t);
    const { etag } = await read(id, path);
    const answers = await Promise.all([
      put(id, path, { [member]: a }, etag),
      put(id, path, { [member]: b }, etag),
    ]);
    const statuses = answers.map((r) => r.status).sort();
    expect({ statuses, bodies: answers.map((r) => r.text) }).toEqual({
      statuses: [204, 412],
      bodies: expect.any(Array),
    });
    const winner = answers.findIndex((r) => r.status === 204);
    expect((await read(id, path)).names).toEqual([...(winner === 0 ? a : b)]);
  });
});

describe('the ETag of a person roles', () => {
  it('changes when another route changes them: a role deleted makes the old ETag fail', async () => {
    await expectStatus(await t.call('POST', '/roles', { body: { name: 'temp', permissions: [] } }), 201);
    const id = await newPerson(t);
    await expectStatus(await put(id, 'roles', { roles: ['temp', 'editor'] }), 204);
    const { etag } = await read(id, 'roles');
    await expectStatus(await t.call('DELETE', '/roles/temp'), 204);
    const res = await put(id, 'roles', { roles: ['admin'] }, etag);
    await expectStatus(res, 412);
    expect((await read(id, 'roles')).names).toEqual(['editor']);
  });

  it('documents If-Match, the 412 and the ETag in the OpenAPI document', async () => {
    const doc = await t.call('GET', '/openapi.json');
    await expectStatus(doc, 200);
    for (const path of ['/persons/{person_id}/roles', '/persons/{person_id}/additional-permissions']) {
      const { get, put: write } = doc.json.paths[path];
      expect(Object.keys(get.responses['200'].headers)).toEqual(['ETag']);
      expect(Object.keys(write.responses)).toContain('412');
      expect(write.parameters.map((p: { name: string }) => p.name)).toContain('If-Match');
    }
  });
});
