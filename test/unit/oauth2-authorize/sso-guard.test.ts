import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { expectStatus } from '../../helpers/expect-status.ts';
import { openLogin } from './fixture.ts';
import { type SsoLogin, startSsoLogin } from './sso-fixture.ts';

/**
 * The hosted login's SSO button when the provider is refused by the address guard (the test provider is
 * on loopback and SSO_ALLOW_PRIVATE allows none here): the page says the provider cannot be reached, and
 * nothing of where it is.
 */
let f: SsoLogin;

beforeAll(async () => {
  f = await startSsoLogin({ env: { SSO_ALLOW_PRIVATE: '' } });
});
afterAll(async () => {
  await f.stop();
});

const messageOf = (html: string) => /<p class="error" role="alert">([^<]*)<\/p>/.exec(html)?.[1];

describe('the hosted login with a provider the address guard refuses', () => {
  it('shows a message without the address, the port or the reason', async () => {
    const opened = await openLogin((await f.begin()).url);
    const res = await f.pressButton(opened);
    await expectStatus(res, 400);
    const message = messageOf(await res.text()) ?? '';
    expect(message).toBe(
      'The sign-in provider cannot be reached now: discovery of the issuer failed: the provider could not be reached (the service log has the reason)',
    );
    expect(message).not.toContain(String(f.op.port));
    expect(message).not.toMatch(/127\.0\.0\.1|op\.hooks\.test|private|refused/);
  });
});
