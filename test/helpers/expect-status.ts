/** What a status check can read: a fetch Response, a CallResult of the test service, or a raw answer. */
export type WithStatus = { status: number; text?: string; body?: unknown } | Response;

const bodyOf = async (res: WithStatus): Promise<string> => {
  if (res instanceof Response) return res.bodyUsed ? '(body already read)' : await res.clone().text();
  if (res.text !== undefined) return res.text;
  return typeof res.body === 'string' ? res.body : res.body === undefined ? '' : JSON.stringify(res.body);
};

/**
 * Asserts a response's status and, when it differs, fails with the body it got, so a failing test says
 * why: `expected 201, got 400 {"errors":[...]}`.
 *
 * @example await expectStatus(await call('POST', '/organizations/webhooks', { body }), 201);
 */
export async function expectStatus(res: WithStatus, status: number | readonly number[]): Promise<void> {
  const wanted = typeof status === 'number' ? [status] : status;
  if (wanted.includes(res.status)) return;
  const body = (await bodyOf(res)).slice(0, 2000);
  throw new Error(`expected ${wanted.join(' or ')}, got ${res.status} ${body}`);
}
