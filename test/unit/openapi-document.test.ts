import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { expectStatus } from '../helpers/expect-status.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// The whole default service: every plugin's routes, as a deployment serves them.
let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(() => t.stop());

type Operation = { operationId?: string; responses?: Record<string, unknown> };
type Paths = Record<string, Record<string, Operation>>;

async function servedPaths(): Promise<Paths> {
  const doc = await t.call('GET', '/openapi.json');
  await expectStatus(doc, 200);
  return doc.json.paths;
}

const statusesOf = (paths: Paths, method: string, path: string) =>
  Object.keys(paths[path]?.[method]?.responses ?? {});

describe('the served OpenAPI document', () => {
  it('documents the success status of every operation', async () => {
    const paths = await servedPaths();
    const undocumented: string[] = [];
    for (const [path, operations] of Object.entries(paths))
      for (const [method, op] of Object.entries(operations)) {
        // A redirect is the success of a browser-facing route (the SSO start, the hosted login).
        const success = Object.keys(op.responses ?? {}).filter((s) => /^[23]\d\d$/.test(s));
        if (success.length === 0)
          undocumented.push(`${method.toUpperCase()} ${path} (responses: ${JSON.stringify(op.responses)})`);
      }
    expect(undocumented).toEqual([]);
  });

  it('gives each write its success status as the reference does', async () => {
    const paths = await servedPaths();
    const expected: Array<[string, string, string[]]> = [
      ['put', '/persons', ['200', '201', '400', '409']],
      ['delete', '/groups/{group_name}/persons/{person_id}', ['200', '404']],
      ['post', '/groups/{group_name}/persons', ['201', '404']],
      ['post', '/token/revoke', ['204', '400']],
      ['post', '/logout', ['204', '401', '429']],
    ];
    for (const [method, path, statuses] of expected)
      expect({ op: `${method} ${path}`, statuses: statusesOf(paths, method, path) }).toEqual({
        op: `${method} ${path}`,
        statuses: expect.arrayContaining(statuses),
      });
  });

  it('includes the well-known documents, with the key set cacheable by ETag', async () => {
    const paths = await servedPaths();
    expect(statusesOf(paths, 'get', '/.well-known/jwks.json')).toEqual(['200', '304']);
    expect(statusesOf(paths, 'get', '/.well-known/openid-configuration')).toEqual(['200']);
    const discovery = paths['/.well-known/openid-configuration']?.get;
    expect(discovery?.operationId).toBe('GetWellKnownOpenidConfiguration');
  });
});
