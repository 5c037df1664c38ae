import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { TestService } from '../../helpers/service.ts';
import { email, startPersonsService } from './helpers.ts';

let t: TestService;
beforeAll(async () => {
  t = await startPersonsService();
});
afterAll(() => t.stop());

/** A person created in europe-belgium through POST /persons. */
async function belgian(n: string) {
  const res = await t.call('POST', '/persons', {
    body: { handles: [email(n)], region: 'europe-belgium', groups: ['before'] },
  });
  await expectStatus(res, 201);
  return res.json.result.person_id as string;
}

const handleCount = async (value: string) =>
  Number(
    (
      await t.service.ctx.storage.query<{ n: string }>(
        sql`select count(*) as n from persons_handles where value = ${value}`,
      )
    )[0]?.n,
  );

describe('PUT /persons with an explicit region', () => {
  it('answers 409 naming the handle and both regions when the person lives in another, and changes nothing', async () => {
    const id = await belgian('rc1');
    const res = await t.call('PUT', '/persons', {
      body: { handles: [email('rc1'), email('rc1-new')], region: 'us-iowa', groups: ['after'] },
    });
    await expectStatus(res, 409);
    const message: string = res.json.errors[0].message;
    expect(message).toContain('body.region');
    expect(message).toContain('"prc1@example.com"');
    expect(message).toContain('europe-belgium');
    expect(message).toContain('us-iowa');
    const after = await t.call('GET', `/persons/${id}`);
    expect(after.json.result).toMatchObject({ region: 'europe-belgium', groups: ['before'] });
    expect(after.json.result.handles).toHaveLength(1);
    expect(await handleCount('prc1-new@example.com')).toBe(0);
  });

  it('updates the person when the region is its own or not given', async () => {
    const id = await belgian('rc2');
    const same = await t.call('PUT', '/persons', {
      body: { handles: [email('rc2')], region: 'europe-belgium', groups: ['same'] },
    });
    await expectStatus(same, 200);
    expect(same.json.result).toMatchObject({ person_id: id, groups: ['same'] });
    const unsaid = await t.call('PUT', '/persons', { body: { handles: [email('rc2')], groups: ['unsaid'] } });
    await expectStatus(unsaid, 200);
    expect(unsaid.json.result).toMatchObject({ person_id: id, region: 'europe-belgium', groups: ['unsaid'] });
  });

  it('refuses a bulk PUT whole, naming the person, the handle and both regions', async () => {
    await belgian('rc3');
    const res = await t.call('PUT', '/persons', {
      body: [
        { handles: [email('rc3-fresh')], region: 'asia-japan' },
        { handles: [email('rc3')], region: 'asia-japan' },
      ],
    });
    await expectStatus(res, 409);
    const message: string = res.json.errors[0].message;
    expect(message).toContain('body[1].region');
    expect(message).toContain('"prc3@example.com"');
    expect(message).toContain('europe-belgium');
    expect(message).toContain('asia-japan');
    expect(await handleCount('prc3-fresh@example.com')).toBe(0);
  });
});
