import { afterEach, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { scaledClock } from '../../../adapters/clock/system.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { capturingLogger, countingCounters, mailProbe } from '../../helpers/mail.ts';
import { startTestService, type TestService } from '../../helpers/service.ts';
import { smtpTls, startSmtpServer, type TestSmtpServer } from '../../helpers/smtp.ts';
import { until } from '../../helpers/webhooks.ts';

let smtp: TestSmtpServer | undefined;
let svc: TestService | undefined;
afterEach(async () => {
  await svc?.stop();
  await smtp?.stop();
  svc = smtp = undefined;
});

/** A service whose messages go to the loopback SMTP server, its workers running. */
async function mailService(o: { clock?: Clock; window?: string } = {}) {
  smtp ??= await startSmtpServer();
  const log = capturingLogger();
  const counters = countingCounters();
  svc = await startTestService({
    env: {
      SMTP_URL: smtp.url.replace('smtp://', 'smtp://robot:s3cret@'),
      MAIL_FROM: 'no-reply@ids.test',
      NODE_EXTRA_CA_CERTS: smtpTls().caFile,
      ...(o.window ? { MAIL_RETRY_WINDOW_MINUTES: o.window } : {}),
    },
    definition: { plugins: [mailProbe()] },
    log,
    messageCounters: counters,
    ...(o.clock ? { clock: o.clock } : {}),
  });
  await svc.service.start();
  const send = (body: Record<string, unknown>) =>
    svc!.call('POST', '/probe/mail', {
      body: { to: 'ada@example.com', link: 'https://app.test/x', ...body },
    });
  return { svc, smtp, log, counters, send };
}

describe('the SMTP transport', () => {
  it('delivers a message over STARTTLS with text, HTML, the organization as sender name and a Message-ID', async () => {
    const { send, smtp } = await mailService();
    await expectStatus(await send({ note: '<b>bold & "quoted"</b>' }), 202);
    const [mail] = await smtp.waitFor(1);
    expect(mail!.secure).toBe(true);
    expect(mail!.envelopeTo).toEqual(['ada@example.com']);
    const m = mail!.parsed;
    expect(m.subject).toBe('A probe from Acme');
    expect(m.from?.value).toEqual([{ name: 'Acme', address: 'no-reply@ids.test' }]);
    expect(m.text).toContain('Follow https://app.test/x');
    expect(m.text).toContain('<b>bold & "quoted"</b>');
    expect(m.html).toContain('<a href="https://app.test/x">');
    expect(m.html).toContain('&lt;b&gt;bold &amp; &quot;quoted&quot;&lt;/b&gt;');
    expect(m.messageId).toMatch(/^<[0-9a-f-]{36}@ids\.test>$/);
    expect(m.headers.get('auto-submitted')).toBe('auto-generated');
  });

  it('answers before the mail server has accepted, and keeps the queued message sealed', async () => {
    const { send, smtp, svc } = await mailService();
    smtp.mode = 'hold';
    const started = Date.now();
    await expectStatus(await send({ link: 'https://app.test/reset?token=very-secret-token' }), 202);
    expect(Date.now() - started).toBeLessThan(2000);
    await until(() => smtp.holding === 1, 10_000, 'the server to hold the message at DATA');
    expect(smtp.received).toHaveLength(0);
    const rows = await svc.service.ctx.storage.query<{ payload: string }>(
      sql`select payload::text as payload from bus_messages where topic = 'messages'`,
    );
    expect(rows.length).toBe(1);
    expect(rows[0]!.payload).not.toContain('very-secret-token');
    expect(rows[0]!.payload).not.toContain('ada@example.com');
    smtp.release();
    const [mail] = await smtp.waitFor(1);
    expect(mail!.parsed.text).toContain('very-secret-token');
  });

  it('retries a message the server defers, and delivers it once the server accepts again', async () => {
    // 600 times faster: the 30 s and 1 min retries take 50 and 100 ms.
    const { send, smtp, log, counters } = await mailService({ clock: scaledClock(600) });
    smtp.mode = 'defer';
    await expectStatus(await send({}), 202);
    await until(() => smtp.refused >= 2, 10_000, 'two deferred attempts');
    smtp.mode = 'accept';
    const [mail] = await smtp.waitFor(1);
    expect(mail!.parsed.subject).toBe('A probe from Acme');
    await until(() => counters.counts['sent:probe'] === 1, 5000, 'the sent count');
    expect(counters.counts['retried:probe']).toBeGreaterThanOrEqual(2);
    const retries = log.lines.filter((l) => l.msg === 'message not accepted; retrying');
    expect(retries[0]).toMatchObject({ kind: 'probe', transport: 'smtp', retry_in_ms: 30_000 });
    expect(String(retries[0]!.error)).toContain('451');
    await new Promise((r) => setTimeout(r, 300));
    expect(smtp.received).toHaveLength(1);
  });

  it('drops a message once the retry window has passed, with a log line and a count', async () => {
    // A one-minute window at 600 times: gone after about 100 ms of deferrals.
    const { send, smtp, log, counters } = await mailService({ clock: scaledClock(600), window: '1' });
    smtp.mode = 'defer';
    await expectStatus(await send({}), 202);
    await until(() => counters.counts['dropped:probe'] === 1, 10_000, 'the drop');
    const dropped = log.lines.find((l) => String(l.msg).startsWith('message dropped'));
    expect(dropped).toMatchObject({ level: 'error', kind: 'probe', transport: 'smtp' });
    expect(String(dropped!.msg)).toContain('the retry window of 1 minutes ended');
    expect(smtp.received).toHaveLength(0);
  });

  it('drops at once a message whose recipient the server refuses with a 5xx', async () => {
    const { send, smtp, log, counters } = await mailService();
    smtp.mode = 'reject-recipient';
    await expectStatus(await send({}), 202);
    await until(() => counters.counts['dropped:probe'] === 1, 10_000, 'the drop');
    expect(smtp.refused).toBe(1);
    expect(counters.counts['retried:probe']).toBeUndefined();
    const dropped = log.lines.find((l) => String(l.msg).startsWith('message dropped'));
    expect(String(dropped!.msg)).toContain('refused it for good');
    expect(String(dropped!.error)).toContain('550');
  });

  it('drops a message whose link expired before the server took it', async () => {
    const { send, smtp, counters, svc } = await mailService({ clock: scaledClock(600) });
    smtp.mode = 'defer';
    // Expires 45 s (75 ms here) after now: the first retry comes at 30 s, the second would be past it.
    await expectStatus(await send({ not_after: svc.service.ctx.clock.now() + 45_000 }), 202);
    await until(() => counters.counts['dropped:probe'] === 1, 10_000, 'the drop');
    expect(smtp.received).toHaveLength(0);
  });
});
