import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { Storage } from '../../../core/ports/storage.ts';
import {
  createOAuth2ConsentStore,
  type OAuth2ConsentStore,
} from '../../../plugins/oauth2-authorize/consent/store.ts';
import { manualClock } from '../../helpers/clock.ts';
import { freshPglite } from '../../helpers/pglite.ts';

const clock = manualClock();
let storage: Storage;
let consents: OAuth2ConsentStore;
beforeAll(async () => {
  storage = await freshPglite();
  consents = createOAuth2ConsentStore({ storage, clock });
});
afterAll(() => storage.close());

const ORG = '0190a5b4-7c6d-7e8f-9a0b-1c2d3e4f5a6b';
const OTHER_ORG = '0190a5b4-7c6d-7e8f-9a0b-ffffffffffff';
let n = 0;
/** A fresh person ID, so the tests share no row. */
const person = () => `0190a5b4-0000-7000-8000-${String(++n).padStart(12, '0')}`;

describe('oauth2 consents', () => {
  it('covers nothing before a grant, then exactly the scopes granted', async () => {
    const p = person();
    expect(await consents.covers(ORG, p, 'app', [])).toBe(false);
    expect(await consents.covers(ORG, p, 'app', ['openid'])).toBe(false);
    await consents.grant(ORG, p, 'app', ['openid', 'email']);
    expect(await consents.covers(ORG, p, 'app', ['openid'])).toBe(true);
    expect(await consents.covers(ORG, p, 'app', ['email', 'openid'])).toBe(true);
    expect(await consents.covers(ORG, p, 'app', [])).toBe(true);
    expect(await consents.covers(ORG, p, 'app', ['openid', 'phone'])).toBe(false);
    // Another client of the same person is not covered by this one's consent.
    expect(await consents.covers(ORG, p, 'other-app', ['openid'])).toBe(false);
  });

  it('adds to what was granted, never narrows it, and moves updated_at only', async () => {
    const p = person();
    const first = clock.now();
    await consents.grant(ORG, p, 'app', ['read', 'openid', 'read']);
    clock.advance(60_000);
    await consents.grant(ORG, p, 'app', ['email']);
    clock.advance(60_000);
    await consents.grant(ORG, p, 'app', ['openid']);
    expect(await consents.list(ORG, p)).toEqual([
      { clientId: 'app', scopes: ['email', 'openid', 'read'], createdAt: first, updatedAt: first + 120_000 },
    ]);
    expect(await consents.covers(ORG, p, 'app', ['read', 'email', 'openid'])).toBe(true);
  });

  it('keeps both of two grants racing', async () => {
    const p = person();
    await Promise.all([
      consents.grant(ORG, p, 'app', ['a', 'b']),
      consents.grant(ORG, p, 'app', ['c']),
      consents.grant(ORG, p, 'app', ['d', 'a']),
    ]);
    expect((await consents.list(ORG, p))[0]?.scopes).toEqual(['a', 'b', 'c', 'd']);
  });

  it('refuses a scope holding whitespace rather than store two', async () => {
    await expect(consents.grant(ORG, person(), 'app', ['read write'])).rejects.toThrow(/whitespace/);
  });

  it('lists the consents oldest first, and revokes one client or all of them', async () => {
    const p = person();
    await consents.grant(ORG, p, 'b-app', ['openid']);
    clock.advance(1000);
    await consents.grant(ORG, p, 'a-app', ['email']);
    clock.advance(1000);
    await consents.grant(ORG, p, 'c-app', ['read']);
    expect((await consents.list(ORG, p)).map((c) => c.clientId)).toEqual(['b-app', 'a-app', 'c-app']);

    expect(await consents.revoke(ORG, p, 'a-app')).toEqual(['a-app']);
    expect(await consents.revoke(ORG, p, 'a-app')).toEqual([]);
    expect(await consents.covers(ORG, p, 'a-app', ['email'])).toBe(false);
    expect((await consents.list(ORG, p)).map((c) => c.clientId)).toEqual(['b-app', 'c-app']);

    expect((await consents.revoke(ORG, p)).sort()).toEqual(['b-app', 'c-app']);
    expect(await consents.list(ORG, p)).toEqual([]);
    expect(await consents.revoke(ORG, p)).toEqual([]);
  });

  it("neither reads nor revokes another organization's consents, nor another person's", async () => {
    const [p, bystander] = [person(), person()];
    await consents.grant(ORG, p, 'app', ['openid', 'email']);
    await consents.grant(ORG, bystander, 'app', ['openid']);

    // The same person and client IDs named under another organization find nothing there.
    expect(await consents.covers(OTHER_ORG, p, 'app', ['openid'])).toBe(false);
    expect(await consents.list(OTHER_ORG, p)).toEqual([]);
    expect(await consents.revoke(OTHER_ORG, p, 'app')).toEqual([]);
    expect(await consents.revoke(OTHER_ORG, p)).toEqual([]);
    // A grant there is its own row, widening nothing here.
    await consents.grant(OTHER_ORG, p, 'app', ['phone']);
    expect(await consents.covers(ORG, p, 'app', ['phone'])).toBe(false);
    expect(await consents.covers(ORG, p, 'app', ['openid', 'email'])).toBe(true);

    expect(await consents.revoke(ORG, p)).toEqual(['app']);
    expect(await consents.covers(ORG, bystander, 'app', ['openid'])).toBe(true);
    expect(await consents.covers(OTHER_ORG, p, 'app', ['phone'])).toBe(true);
  });

  it('writes in the caller’s transaction, gone with its rollback', async () => {
    const p = person();
    await expect(
      storage.transaction(async (tx) => {
        await consents.grant(ORG, p, 'app', ['openid'], { tx });
        expect(await consents.covers(ORG, p, 'app', ['openid'], { tx })).toBe(true);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await consents.covers(ORG, p, 'app', ['openid'])).toBe(false);
  });
});
