import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { expectStatus } from '../../helpers/expect-status.ts';
import { passwordService } from './fixture.ts';

type Svc = Awaited<ReturnType<typeof passwordService>>;
let s: Svc;
let personId: string;
const EMAIL = { type: 'email_address' as const, value: 'ada@example.com' };
const GOOD = 'correct horse battery staple';
beforeAll(async () => {
  s = await passwordService();
  personId = (await s.addPerson([EMAIL])).personId;
  await expectStatus(await s.setPassword(personId, { password: GOOD }), 204);
});
afterAll(() => s.stop());

const BAD: Array<[string, string, string]> = [
  ['Service-Required-Consistency', 'x', 'must be local_region or all_regions'],
  ['Service-Required-Consistency-Timeout', '0', 'must be an integer number of seconds from 1 to 120'],
];

const count = async (query: ReturnType<typeof sql>) =>
  Number((await s.service.ctx.storage.query<{ n: string }>(query))[0]?.n);
const persons = () => count(sql`select count(*) as n from persons`);
const firstTokens = () => count(sql`select count(*) as n from tokens_issued_persons`);

describe('the consistency headers on end-user writes (Service-OrgID only)', () => {
  it.each(BAD)(
    'POST /persons/anonymous answers 400 for %s: %s and creates nobody',
    async (h, value, rule) => {
      const before = await persons();
      const res = await s.call('POST', '/persons/anonymous', { key: null, headers: { [h]: value } });
      await expectStatus(res, 400);
      expect(res.json.errors[0].message).toContain(rule);
      expect(await persons()).toBe(before);
    },
  );

  it.each(BAD)(
    'POST /authenticate/password answers 400 for %s: %s and issues nothing',
    async (h, value, rule) => {
      const before = await firstTokens();
      const res = await s.signIn({ handle: EMAIL, password: GOOD }, { [h]: value });
      await expectStatus(res, 400);
      expect(res.json.errors[0].message).toContain(rule);
      expect(await firstTokens()).toBe(before);
      expect(await s.eventsNamed('AuthenticationSucceeded_v1', 0)).toEqual([]);
    },
  );

  it.each([
    ['/authenticate/password/reset', { handle: EMAIL }],
    ['/authenticate/password/reset/confirm', { token: 'nope', password: GOOD }],
  ])('POST %s answers 400 for a bad consistency level', async (path, body) => {
    const res = await s.call('POST', path, { key: null, body, headers: { [BAD[0]![0]]: 'x' } });
    await expectStatus(res, 400);
    expect(res.json.errors[0].message).toContain(BAD[0]![2]);
  });

  it('accepts both levels on sign-in and on anonymous persons', async () => {
    for (const level of ['local_region', 'all_regions']) {
      const headers = { 'Service-Required-Consistency': level, 'Service-Required-Consistency-Timeout': '5' };
      await expectStatus(await s.signIn({ handle: EMAIL, password: GOOD }, headers), 200);
      await expectStatus(await s.call('POST', '/persons/anonymous', { key: null, headers }), 201);
    }
  });
});
