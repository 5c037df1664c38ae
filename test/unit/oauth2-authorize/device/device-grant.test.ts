import { describe, expect, test } from 'bun:test';
import { manualClock } from '../../../helpers/clock.ts';
import { expectStatus } from '../../../helpers/expect-status.ts';
import { startAuthorizeService } from '../fixture.ts';
import { CookieJar, postPage } from '../sessions/browser-jar.ts';
import { deviceGrantSuite } from './device-grant.suite.ts';

deviceGrantSuite('device authorization (RFC 8628), on PGlite', (clock) =>
  startAuthorizeService({ clock, env: { OAUTH2_DEVICE_CODE_RATE_LIMIT: '1000/1000' } }),
);

describe('guessing user codes', () => {
  test('codes entered are limited per address: 429 with Retry-After', async () => {
    const limited = await startAuthorizeService({
      clock: manualClock(Date.now()),
      env: { OAUTH2_DEVICE_CODE_RATE_LIMIT: '1/3' },
    });
    try {
      const jar = new CookieJar();
      for (let i = 0; i < 3; i++)
        await expectStatus(await postPage(jar, limited, '/oauth2/device', { user_code: 'BCDF-GHJK' }), 400);
      const res = await postPage(jar, limited, '/oauth2/device', { user_code: 'BCDF-GHJK' });
      await expectStatus(res, 429);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await limited.stop();
    }
  });
});
