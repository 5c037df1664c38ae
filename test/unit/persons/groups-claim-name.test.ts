import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { REGISTERED_CLAIMS, RESERVED_CLAIMS } from '../../../core/tokens/reserved-claims.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { TestService } from '../../helpers/service.ts';
import { startPersonsService } from './helpers.ts';

let t: TestService;
beforeAll(async () => {
  t = await startPersonsService();
});
afterAll(() => t.stop());

const setName = (name: string) =>
  t.call('PUT', '/organizations/persons-settings', { body: { groups_claim_name: name } });

/** The names the audit found accepted: each then replaced a claim the service owns in every token. */
const AUDITED = ['sid', 'org_id', 'user_id', 'access_token', 'custom_claims', 'attributes', 'id'];
const MORE = ['prev_token_id', 'parent_oid', 'gdpr'];

describe('PUT /organizations/persons-settings groups_claim_name', () => {
  it('refuses every registered and reserved claim with a 400 naming the field and the rule', async () => {
    const reserved = [...RESERVED_CLAIMS].filter((c) => c !== 'groups' && /^\w+$/.test(c));
    for (const name of new Set([...AUDITED, ...MORE, ...REGISTERED_CLAIMS, ...reserved])) {
      const res = await setName(name);
      await expectStatus(res, 400);
      const message: string = res.json.errors[0].message;
      expect(message).toContain('body.groups_claim_name');
      expect(message).toContain(`"${name}" is a registered or reserved claim`);
    }
    const read = await t.call('GET', '/organizations/persons-settings');
    expect(read.json.result).toEqual({ groups_claim_name: 'groups' });
  });

  it("refuses an ID token's claims and the deployment's header prefix", async () => {
    for (const name of ['nonce', 'azp', 'auth_time', 'amr', 'service']) {
      const res = await setName(name);
      await expectStatus(res, 400);
      expect(res.json.errors[0].message).toContain(`"${name}" is a registered or reserved claim`);
    }
  });

  it('accepts a free name and "groups", the default, back again', async () => {
    await expectStatus(await setName('teams'), 200);
    const back = await setName('groups');
    await expectStatus(back, 200);
    expect(back.json.result).toEqual({ groups_claim_name: 'groups' });
  });
});
