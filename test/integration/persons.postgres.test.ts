import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { persons } from '../../plugins/persons/index.ts';
import { expectStatus } from '../helpers/expect-status.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { email } from '../unit/persons/helpers.ts';
import { isolatedPostgres } from './support.ts';

let t: TestService;
let drop: () => Promise<void>;
beforeAll(async () => {
  const pg = await isolatedPostgres('persons');
  drop = pg.drop;
  t = await startTestService({ storage: pg.storage, definition: { plugins: [persons()] } });
});
afterAll(async () => {
  await t.stop();
  await drop();
});

describe('persons on Postgres', () => {
  it('gives one 201 and 409s when many connections create one handle at once', async () => {
    const racing = await Promise.all(
      Array.from({ length: 8 }, () => t.call('POST', '/persons', { body: { handles: [email('pg-race')] } })),
    );
    expect(racing.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
  });

  it('bulk-creates all or nothing and lists by handle', async () => {
    await expectStatus(await t.call('PUT', '/persons', { body: [{ handles: [email('pg1')] }] }), 201);
    const refused = await t.call('PUT', '/persons', {
      body: [{ handles: [email('pg2')] }, { handles: [email('pg1')] }],
    });
    await expectStatus(refused, 409);
    const listed = await t.call(
      'GET',
      `/persons?handle=${encodeURIComponent('email_address:ppg2@example.com')}`,
    );
    await expectStatus(listed, 200);
    expect(listed.json.result).toEqual([]);
  });
});
