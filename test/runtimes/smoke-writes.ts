/**
 * The writing half of the runtime smoke: one write of every status class (201, 204, 4xx), each read
 * back, and the refusals the front door gives on every runtime (405, 501, 408, a body that is not JSON).
 */
import { type Answer, call, check, expectAnswer, raw, type SmokeTarget } from './http.ts';

const noBody = (a: Answer, what: string) =>
  check(a.text === '', `${what} answers without a body (got ${JSON.stringify(a.text.slice(0, 200))})`);

export async function smokeWrites(t: SmokeTarget): Promise<string[]> {
  const done: string[] = [];
  const bucket = '/organizations/attributes/end_user_read_write';

  const put = await call(t, 'PUT', bucket, { color: 'teal', size: 3 });
  expectAnswer(put, 204, 'PUT attributes');
  noBody(put, 'PUT attributes');
  const patch = await call(t, 'PATCH', bucket, { size: 4 });
  expectAnswer(patch, 204, 'PATCH attributes');
  noBody(patch, 'PATCH attributes');
  const removed = await call(t, 'DELETE', `${bucket}?attributes=color`);
  expectAnswer(removed, 204, 'DELETE an attribute');
  noBody(removed, 'DELETE an attribute');
  const attrs = await call(t, 'GET', bucket);
  expectAnswer(attrs, 200, 'GET attributes');
  check(JSON.stringify(attrs.json?.result) === '{"size":4}', `attributes read back (got ${attrs.text})`);
  done.push('attributes 204 x3 read back');

  const created = await call(t, 'POST', '/organizations/webhooks', {
    name: 'smoke',
    target_url: 'https://hooks.example.com/smoke',
  });
  expectAnswer(created, 201, 'POST a webhook');
  const id: string = created.json?.result?.id;
  check(typeof id === 'string', `the created webhook has an id (got ${created.text})`);
  const triggers = `/organizations/webhooks/${id}/triggers`;
  const trigger = { trigger_type: 'event', trigger_name: 'PersonCreated_v1' };
  expectAnswer(await call(t, 'POST', triggers, trigger), 201, 'POST a trigger');
  const untrigger = await call(t, 'DELETE', `${triggers}?trigger_type=event&trigger_name=PersonCreated_v1`);
  expectAnswer(untrigger, 204, 'DELETE a trigger');
  noBody(untrigger, 'DELETE a trigger');
  const read = await call(t, 'GET', `/organizations/webhooks/${id}`);
  expectAnswer(read, 200, 'GET the webhook');
  check(read.json?.result?.name === 'smoke', `the webhook read back (got ${read.text})`);
  const deleted = await call(t, 'DELETE', `/organizations/webhooks/${id}`);
  expectAnswer(deleted, 204, 'DELETE the webhook');
  noBody(deleted, 'DELETE the webhook');
  expectAnswer(await call(t, 'GET', `/organizations/webhooks/${id}`), 404, 'GET the deleted webhook');
  done.push('webhook 201/204 read back');

  const bad = await call(t, 'POST', '/organizations/webhooks', { name: 'x', target_url: 'http://10.0.0.1/' });
  expectAnswer(bad, 400, 'POST a webhook with a bad target_url');
  check(/target_url/.test(bad.json?.errors?.[0]?.message ?? ''), `the 400 names target_url (${bad.text})`);
  const notJson = await call(t, 'POST', '/organizations/webhooks', 'name=x', {
    'content-type': 'text/plain',
  });
  expectAnswer(notJson, 400, 'POST a body that is not JSON');
  check(
    (notJson.json?.errors?.[0]?.message ?? '').startsWith('request body must be JSON'),
    `a body that is not JSON is named so (${notJson.text})`,
  );
  done.push('400s');

  const host = `Host: ${new URL(t.baseUrl).host}\r\n`;
  const auth = `Service-OrgID: ${t.orgId}\r\nService-API-Key: ${t.apiKey}\r\n`;
  const propfind = await raw(t, `PROPFIND /organizations HTTP/1.1\r\n${host}Connection: close\r\n\r\n`, 5000);
  check(
    propfind.status === 405 && propfind.head.includes('allow: get, head'),
    `PROPFIND answers 405 with Allow (got ${propfind.status} ${propfind.head})`,
  );
  const foo = await raw(t, `FOO /organizations HTTP/1.1\r\n${host}Connection: close\r\n\r\n`, 5000);
  // Bun's HTTP parser closes the connection on a method it does not know, before any handler runs.
  const fooWanted = t.runtime === 'bun' ? 0 : 501;
  check(foo.status === fooWanted, `FOO answers ${fooWanted || 'nothing'} (got ${foo.status} ${foo.body})`);
  const started = Date.now();
  const stalled = await raw(
    t,
    `POST /organizations/webhooks HTTP/1.1\r\n${host}${auth}content-type: application/json\r\ncontent-length: 100\r\n\r\n{"name":`,
    t.requestTimeoutMs + 10_000,
  );
  check(
    stalled.status === 408 && stalled.body.includes('{"errors":[{"httpcode":408,'),
    `a stalled body answers 408 in the envelope (got ${stalled.status} ${stalled.body} after ${Date.now() - started} ms)`,
  );
  done.push(`405, ${fooWanted || 'closed'} FOO, 408`);
  return done;
}
