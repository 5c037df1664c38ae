import { afterAll } from 'bun:test';
import { edge } from '../../plugins/edge/index.ts';
import { sdk } from '../../plugins/sdk/index.ts';
import { startIdentityService } from '../helpers/identity-service.ts';
import { sdkIngestSuite } from '../unit/sdk/sdk-ingest.suite.ts';
import { deleteStreams, isolatedPostgres, NATS_URL, uniquePrefix } from './support.ts';

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

/** The identity service with sdk and edge on a Postgres schema of its own, with pg-queue or JetStream. */
async function onPostgres(streamPrefix?: string) {
  const pg = await isolatedPostgres('sdk');
  const t = await startIdentityService({
    storage: pg.storage,
    plugins: [sdk(), edge()],
    env: streamPrefix ? { NATS_URL, NATS_STREAM_PREFIX: streamPrefix } : {},
  });
  cleanups.push(async () => {
    await pg.drop();
    if (streamPrefix) await deleteStreams(streamPrefix);
  });
  return t;
}

sdkIngestSuite('the SDK ingest, logout and the edge ingest on Postgres with pg-queue', () => onPostgres());
sdkIngestSuite('the SDK ingest, logout and the edge ingest on Postgres with JetStream', () =>
  onPostgres(uniquePrefix()),
);
