import { afterAll } from 'bun:test';
import { deviceGrantSuite } from '../unit/oauth2-authorize/device/device-grant.suite.ts';
import { startAuthorizeService } from '../unit/oauth2-authorize/fixture.ts';
import { isolatedPostgres } from './support.ts';

/** The device grant on a Postgres schema of its own: its statements (claim once, the unique user code). */
const drops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const drop of drops) await drop();
});

deviceGrantSuite('device authorization (RFC 8628), on Postgres', async (clock) => {
  const pg = await isolatedPostgres('device_grant');
  drops.push(pg.drop);
  return startAuthorizeService({
    clock,
    storage: pg.storage,
    env: { OAUTH2_DEVICE_CODE_RATE_LIMIT: '1000/1000' },
  });
});
