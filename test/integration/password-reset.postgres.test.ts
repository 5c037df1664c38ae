import { afterAll } from 'bun:test';
import type { Env } from '../../core/config.ts';
import { startAuthorizeService } from '../unit/oauth2-authorize/fixture.ts';
import { resetRevocationSuite } from '../unit/oauth2-authorize/reset-revocation.suite.ts';
import { isolatedPostgres } from './support.ts';

const drops: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const drop of drops) await drop();
});

/** The authorization service with SMTP on a Postgres schema of its own (pg-queue carries the mail). */
async function onPostgres(env: Env) {
  const pg = await isolatedPostgres('password_reset');
  drops.push(pg.drop);
  return startAuthorizeService({ storage: pg.storage, env });
}

resetRevocationSuite('a password reset and the OAuth grants on Postgres', onPostgres);
