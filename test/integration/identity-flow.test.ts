import { afterAll } from 'bun:test';
import { startIdentityService } from '../helpers/identity-service.ts';
import { identityFlowSuite } from '../unit/identity-flow.suite.ts';
import { deleteStreams, isolatedPostgres, NATS_URL, uniquePrefix } from './support.ts';

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

/** The identity service on a Postgres schema of its own, with pg-queue or (given a prefix) JetStream. */
async function onPostgres(streamPrefix?: string) {
  const pg = await isolatedPostgres('identity');
  const t = await startIdentityService({
    storage: pg.storage,
    env: streamPrefix ? { NATS_URL, NATS_STREAM_PREFIX: streamPrefix } : {},
  });
  cleanups.push(async () => {
    await pg.drop();
    if (streamPrefix) await deleteStreams(streamPrefix);
  });
  return t;
}

identityFlowSuite('the identity flow on Postgres with pg-queue', () => onPostgres());
identityFlowSuite('the identity flow on Postgres with JetStream', () => onPostgres(uniquePrefix()));
