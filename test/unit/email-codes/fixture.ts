import type { Env } from '../../../core/config.ts';
import { EVENTS_TOPIC, type ServiceEvent } from '../../../core/events/types.ts';
import type { PluginDefinition } from '../../../core/plugin.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import { ack } from '../../../core/ports/event-bus.ts';
import { type EmailCodeOptions, emailCodes } from '../../../plugins/email-codes/index.ts';
import { factors } from '../../../plugins/factors/index.ts';
import { persons } from '../../../plugins/persons/index.ts';
import { tokens } from '../../../plugins/tokens/index.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type CallOptions, type CallResult, startTestService } from '../../helpers/service.ts';
import { type ReceivedMail, smtpTls, startSmtpServer, type TestSmtpServer } from '../../helpers/smtp.ts';
import { until } from '../../helpers/webhooks.ts';

/** A sign-in code in a message: six digits on a line of their own. */
const CODE = /^(\d{6})$/m;
/** A sign-in link: the page with a 43-character token. */
const LINK = /(https?:\/\/[^\s"<>]+\/email\/sign-in\?token=([A-Za-z0-9_-]{43}))/;

export interface EmailTestService extends Awaited<ReturnType<typeof startTestService>> {
  /** Where links lead: the loopback port with `listen`, else https://ids.test (in-process only). */
  baseUrl: string;
  smtp: TestSmtpServer;
  events: ServiceEvent[];
  /** Creates a person holding this email address through the API (in the test organization, or `o`'s). */
  addPerson(email: string, o?: CallOptions): Promise<string>;
  /** POST /authenticate/email as an end user (OrgID only) from `ip`. */
  start(email: unknown, method: string, ip?: string, o?: CallOptions): Promise<CallResult>;
  /** POST /authenticate/email/verify as an end user from `ip`. */
  verify(body: unknown, ip?: string, o?: CallOptions): Promise<CallResult>;
  /** The `n`-th message (1-based), waiting for it. */
  mail(n: number): Promise<ReceivedMail>;
  /** The code of the `n`-th message. */
  code(n: number): Promise<string>;
  /** The link and its token of the `n`-th message. */
  link(n: number): Promise<{ link: string; token: string }>;
  /** The events of that name, once at least `n` have been published (waiting up to 5 s). */
  named(name: string, n: number): Promise<ServiceEvent[]>;
}

/**
 * The persons, tokens, factors and email-codes plugins (and `extra`), workers running, messages sent to a real
 * SMTP server on loopback over STARTTLS; every published event recorded. Client addresses come from
 * X-Forwarded-For.
 */
export async function emailService(
  o: {
    env?: Env;
    clock?: Clock;
    options?: EmailCodeOptions;
    extra?: PluginDefinition[];
    /** Without the factors plugin: the email plugin then issues tokens itself. */
    withoutFactors?: boolean;
    /** Served on a loopback port too (`baseUrl`), for a browser. */
    listen?: boolean;
  } = {},
): Promise<EmailTestService> {
  const smtp = await startSmtpServer();
  // With `listen`, served on a loopback port, which is then the public base URL (links lead there).
  let handler: (r: Request, peer?: string) => Promise<Response> = async () =>
    new Response('starting', { status: 503 });
  const server = o.listen
    ? Bun.serve({
        hostname: '127.0.0.1',
        port: 0,
        fetch: (r, s) => handler(r, s.requestIP(r)?.address),
      })
    : undefined;
  const t = await startTestService({
    env: {
      ...(server ? { PUBLIC_BASE_URL: `http://127.0.0.1:${server.port}` } : {}),
      SMTP_URL: smtp.url,
      MAIL_FROM: 'no-reply@ids.test',
      NODE_EXTRA_CA_CERTS: smtpTls().caFile,
      TRUSTED_PROXY_HOPS: '1',
      ...o.env,
    },
    definition: {
      plugins: [
        persons(),
        tokens(),
        ...(o.withoutFactors ? [] : [factors()]),
        emailCodes(o.options),
        ...(o.extra ?? []),
      ],
    },
    ...(o.clock ? { clock: o.clock } : {}),
  });
  handler = (r, peer) => t.service.fetchFrom(r, peer);
  await t.service.start();
  const events: ServiceEvent[] = [];
  const sub = t.service.ctx.bus.consume<ServiceEvent>(EVENTS_TOPIC, async (m) => {
    events.push(m.payload);
    return ack();
  });
  const email = (value: string) => ({ type: 'email_address', value });
  const mail = async (n: number) => (await smtp.waitFor(n))[n - 1]!;
  const stopService = t.stop;
  return Object.assign(t, {
    baseUrl: server ? `http://127.0.0.1:${server.port}` : 'https://ids.test',
    smtp,
    events,
    async addPerson(address: string, c: CallOptions = {}) {
      const made = await t.call('POST', '/persons', { ...c, body: { handles: [email(address)] } });
      await expectStatus(made, 201);
      return made.json.result.person_id as string;
    },
    start: (handle: unknown, method: string, ip = '203.0.113.7', c: CallOptions = {}) =>
      t.call('POST', '/authenticate/email', {
        key: null,
        ...c,
        headers: { 'x-forwarded-for': ip, ...c.headers },
        body: { handle: typeof handle === 'string' ? email(handle) : handle, method },
      }),
    verify: (body: unknown, ip = '203.0.113.7', c: CallOptions = {}) =>
      t.call('POST', '/authenticate/email/verify', {
        key: null,
        ...c,
        headers: { 'x-forwarded-for': ip, ...c.headers },
        body,
      }),
    mail,
    async code(n: number) {
      const found = CODE.exec((await mail(n)).parsed.text ?? '');
      if (!found) throw new Error(`message ${n} holds no code: ${(await mail(n)).parsed.text}`);
      return found[1]!;
    },
    async link(n: number) {
      const found = LINK.exec((await mail(n)).parsed.text ?? '');
      if (!found) throw new Error(`message ${n} holds no link: ${(await mail(n)).parsed.text}`);
      return { link: found[1]!, token: found[2]! };
    },
    async named(name: string, n: number) {
      const pick = () => events.filter((e) => e.event_metadata.event_name === name);
      await until(() => pick().length >= n, 5000, `${n} ${name}`);
      return pick();
    },
    async stop() {
      await sub.stop();
      await stopService();
      await server?.stop(true);
      await smtp.stop();
    },
  });
}
