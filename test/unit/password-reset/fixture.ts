import type { Env } from '../../../core/config.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { PasswordOptions } from '../../../plugins/password/index.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type IdentityTestService, startIdentityService } from '../../helpers/identity-service.ts';
import type { CallOptions } from '../../helpers/service.ts';
import { bothTestCas, type ReceivedMail, startSmtpServer, type TestSmtpServer } from '../../helpers/smtp.ts';

/** A reset link's token: 43 base64url characters after `token=`. */
const LINK = /(https?:\/\/[^\s"<>]+?[?&]token=([A-Za-z0-9_-]{43}))/;

export interface ResetTestService extends IdentityTestService {
  smtp: TestSmtpServer;
  /** Creates a person with this email (and a password when given) through the API. */
  addPerson(email: string, password?: string, o?: CallOptions): Promise<string>;
  /** POST /authenticate/password/reset as an end user (OrgID only) from `ip`. */
  requestReset(handle: unknown, ip?: string, o?: CallOptions): ReturnType<IdentityTestService['call']>;
  /** Waits for the `n`-th message and answers it with its link and token. */
  message(n: number): Promise<{ mail: ReceivedMail; link: string; token: string }>;
  /** POST /authenticate/password/reset/confirm. */
  confirm(token: string, password: string, o?: CallOptions): ReturnType<IdentityTestService['call']>;
  signIn(email: string, password: string, o?: CallOptions): ReturnType<IdentityTestService['call']>;
}

/**
 * The identity plugins with webhooks, served on a loopback port, its messages going to a real SMTP
 * server on loopback over STARTTLS, workers running.
 */
export async function resetService(
  o: { env?: Env; clock?: Clock; password?: PasswordOptions } = {},
): Promise<ResetTestService> {
  const smtp = await startSmtpServer();
  const t = await startIdentityService({
    env: {
      SMTP_URL: smtp.url,
      MAIL_FROM: 'no-reply@ids.test',
      NODE_EXTRA_CA_CERTS: bothTestCas(),
      ...o.env,
    },
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.password ? { password: o.password } : {}),
  });
  const email = (value: string) => ({ type: 'email_address', value });
  const stopService = t.stop;
  return Object.assign(t, {
    smtp,
    async addPerson(address: string, password?: string, c: CallOptions = {}) {
      const made = await t.call('POST', '/persons', { ...c, body: { handles: [email(address)] } });
      await expectStatus(made, 201);
      const personId: string = made.json.result.person_id;
      if (password)
        await expectStatus(
          await t.call('PUT', `/persons/${personId}/credentials/password`, { ...c, body: { password } }),
          204,
        );
      return personId;
    },
    requestReset: (handle: unknown, ip = '203.0.113.7', c: CallOptions = {}) =>
      t.call('POST', '/authenticate/password/reset', {
        key: null,
        ...c,
        headers: { 'x-forwarded-for': ip, ...c.headers },
        body: { handle },
      }),
    async message(n: number) {
      const mail = (await smtp.waitFor(n))[n - 1]!;
      const found = LINK.exec(mail.parsed.text ?? '');
      if (!found) throw new Error(`message ${n} holds no reset link: ${mail.parsed.text}`);
      return { mail, link: found[1]!, token: found[2]! };
    },
    confirm: (token: string, password: string, c: CallOptions = {}) =>
      t.call('POST', '/authenticate/password/reset/confirm', { key: null, ...c, body: { token, password } }),
    signIn: (address: string, password: string, c: CallOptions = {}) =>
      t.call('POST', '/authenticate/password', {
        key: null,
        ...c,
        body: { handle: email(address), password },
      }),
    async stop() {
      await stopService();
      await smtp.stop();
    },
  });
}
