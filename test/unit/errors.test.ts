import { describe, expect, it } from 'bun:test';
import { CoreErrors, defineErrors, type ErrorCodeOf, ServiceError } from '../../core/errors.ts';
import { EventErrors } from '../../core/events/errors.ts';
import { AttributeErrors } from '../../plugins/attributes/errors.ts';
import { WebhookErrors } from '../../plugins/webhooks/errors.ts';

const Examples = defineErrors({
  THING_NOT_FOUND: { status: 404, message: (id: string) => `no thing ${id}` },
  SLOW_DOWN: { status: 429, message: 'slow down' },
});

describe('error tables', () => {
  it('raise a ServiceError of the code, status and message the table gives, with typed arguments', () => {
    const e = Examples.THING_NOT_FOUND('t1');
    expect(e).toBeInstanceOf(ServiceError);
    expect([e.status, e.code, e.message]).toEqual([404, 'THING_NOT_FOUND', 'no thing t1']);
    expect(Examples.SLOW_DOWN().message).toBe('slow down');
    // @ts-expect-error: the message takes the id, a string
    Examples.THING_NOT_FOUND(1);
    const code: ErrorCodeOf<typeof Examples> = 'SLOW_DOWN';
    expect(code).toBe('SLOW_DOWN');
  });

  it('expose each code and status for the OpenAPI document and tests', () => {
    expect([WebhookErrors.WEBHOOK_NOT_FOUND.code, WebhookErrors.WEBHOOK_NOT_FOUND.status]).toEqual([
      'WEBHOOK_NOT_FOUND',
      404,
    ]);
    expect(AttributeErrors.BUCKET_EXISTS).toMatchObject({ status: 409 });
  });

  it('carry a cause and response headers through .with', () => {
    const cause = new Error('root');
    const e = CoreErrors.RATE_LIMITED.with({ headers: { 'retry-after': '3' }, cause })('wait');
    expect([e.status, e.headers, e.cause, e.message]).toEqual([429, { 'retry-after': '3' }, cause, 'wait']);
  });

  it('give every code of the core and the plugins an HTTP error status, named by its key', () => {
    for (const table of [CoreErrors, EventErrors, WebhookErrors, AttributeErrors])
      for (const [key, factory] of Object.entries(table)) {
        expect(factory.code).toBe(key);
        expect(factory.status >= 400 && factory.status <= 599).toBe(true);
      }
  });

  it('keeps the ServiceError constructor for code that builds one directly', () => {
    const e = new ServiceError(400, 'LEGACY', 'still works', { headers: { a: 'b' } });
    expect([e.status, e.code, e.message, e.headers]).toEqual([400, 'LEGACY', 'still works', { a: 'b' }]);
  });
});
