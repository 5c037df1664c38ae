import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { sweep } from '../../../plugins/oauth2-authorize/store/sweeper.ts';
import { manualClock } from '../../helpers/clock.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import {
  type AuthorizeService,
  authorizationUrl,
  discover,
  exchange,
  type MadeClient,
  obtainCode,
  openLogin,
  refresh,
  startAuthorizeService,
} from './fixture.ts';

const clock = manualClock(Date.now());
let s: AuthorizeService;
let client: MadeClient;
beforeAll(async () => {
  s = await startAuthorizeService({ clock });
  client = await s.createClient({ refresh_token_duration: 86_400 });
});
afterAll(() => s.stop());

async function counts() {
  const [row] = await s.service.ctx.storage.query<Record<string, number>>(sql`select
    (select count(*)::int from oauth2_authorize_logins) as logins,
    (select count(*)::int from oauth2_authorize_codes) as codes,
    (select count(*)::int from oauth2_authorize_families) as families,
    (select count(*)::int from oauth2_authorize_refresh_tokens) as refresh_tokens`);
  return row!;
}

describe('sweeping', () => {
  it('keeps what may still be used or replayed, and deletes the rest once expired', async () => {
    const { code, verifier, callback } = await obtainCode(s, client);
    expect(callback.searchParams.get('code')).toBe(code);
    const tokens = (await exchange(s, client, code, verifier)).json;
    await expectStatus(await refresh(s, client, String(tokens.refresh_token)), 200);
    const { url } = await authorizationUrl(await discover(s), client.client_id);
    await openLogin(url);
    const before = await counts();
    expect(before).toEqual({ logins: 2, codes: 1, families: 1, refresh_tokens: 2 });

    // Two hours on: the logins are gone; the used code's access token (an hour) has expired, but the
    // refresh tokens of its grant live a day, so the code stays: a replay of it still revokes them.
    clock.advance(2 * 3_600_000);
    await sweep(s.service.ctx.storage, clock.now());
    expect(await counts()).toEqual({ logins: 0, codes: 1, families: 1, refresh_tokens: 2 });

    clock.advance(2 * 86_400_000);
    await sweep(s.service.ctx.storage, clock.now());
    expect(await counts()).toEqual({ logins: 0, codes: 0, families: 0, refresh_tokens: 0 });
  });

  it('still revokes the grant when its code is replayed hours later, after sweeps', async () => {
    const { code, verifier } = await obtainCode(s, client);
    const tokens = (await exchange(s, client, code, verifier)).json;
    clock.advance(3 * 3_600_000);
    await sweep(s.service.ctx.storage, clock.now());
    const replay = await exchange(s, client, code, verifier);
    await expectStatus(replay, 400);
    expect(String(replay.json.error_description)).toMatch(/already been used/);
    const after = await refresh(s, client, String(tokens.refresh_token));
    await expectStatus(after, 400);
    expect(String(after.json.error_description)).toMatch(/revoked/);
  });
});
