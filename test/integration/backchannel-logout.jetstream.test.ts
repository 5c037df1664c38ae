import { afterAll } from 'bun:test';
import {
  backchannelLogoutSuite,
  startBackchannelService,
} from '../unit/oauth2-authorize/backchannel-logout.suite.ts';
import { deleteStreams, isolatedPostgres, NATS_URL, uniquePrefix } from './support.ts';

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

// Each service on a Postgres schema and JetStream streams of its own: the notices go through the
// transactional outbox and the backchannel-logout stream, made on first use.
backchannelLogoutSuite('JetStream on Postgres', async (env) => {
  const pg = await isolatedPostgres('backchannel');
  const prefix = uniquePrefix();
  cleanups.push(async () => {
    await pg.drop();
    await deleteStreams(prefix);
  });
  return startBackchannelService({
    env: { ...env, NATS_URL, NATS_STREAM_PREFIX: prefix },
    storage: pg.storage,
  });
});
