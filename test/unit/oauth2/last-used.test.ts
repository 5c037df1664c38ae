import { describe, expect, it } from 'bun:test';
import { createLogger } from '../../../core/log.ts';
import { createLastUsed } from '../../../plugins/oauth2/clients/last-used.ts';
import { manualClock } from '../../helpers/clock.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { basic, startOAuth2Service } from './fixture.ts';

describe("a client's last use", () => {
  it('is written at most once a minute per client, in one statement, and on shutdown', async () => {
    const clock = manualClock();
    const writes: Array<{ ids: string[]; at: number }> = [];
    const lastUsed = createLastUsed({
      store: { touch: async (ids, at) => void writes.push({ ids: [...ids].sort(), at }) },
      clock,
      log: createLogger('silent'),
    });
    lastUsed.seen('a');
    lastUsed.seen('b');
    lastUsed.seen('a');
    await lastUsed.worker.stop();
    expect(writes).toEqual([{ ids: ['a', 'b'], at: clock.now() }]);
    clock.advance(30_000);
    lastUsed.seen('a');
    await lastUsed.worker.stop();
    expect(writes).toHaveLength(1);
    clock.advance(30_000);
    lastUsed.seen('a');
    await lastUsed.worker.stop();
    expect(writes.at(-1)).toEqual({ ids: ['a'], at: clock.now() });
  });

  it('shows as last_used once written', async () => {
    const t = await startOAuth2Service();
    const c = await t.createClient();
    const res = await t.post('/oauth2/tokens', 'grant_type=client_credentials', {
      authorization: basic(c.client_id, c.client_secret!),
    });
    await expectStatus(res, 200);
    const before = await t.call('GET', `/oauth2/clients/${c.client_id}`);
    expect(before.json.result.last_used).toBeUndefined();
    // The worker writes once a minute and when the service stops; its store is the plugin's own.
    const worker = t.service.workers.find((w) => w.name === 'oauth2-last-used')!;
    await worker.stop();
    const after = await t.call('GET', `/oauth2/clients/${c.client_id}`);
    expect(Date.parse(after.json.result.last_used)).toBeGreaterThan(Date.now() - 60_000);
    await t.stop();
  });
});
