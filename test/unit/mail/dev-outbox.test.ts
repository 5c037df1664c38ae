import { afterEach, describe, expect, it } from 'bun:test';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { expectStatus } from '../../helpers/expect-status.ts';
import { capturingLogger, mailProbe } from '../../helpers/mail.ts';
import { startTestService, type TestService } from '../../helpers/service.ts';
import { until } from '../../helpers/webhooks.ts';

let svc: TestService | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await svc?.stop();
  svc = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const LINK = 'http://localhost:3000/password/reset?token=abc123';

describe('the development outbox (no SMTP_URL)', () => {
  it('writes each message as an .eml file under DATA_DIR/outbox and lists its link in index.jsonl', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'data-'));
    dirs.push(dataDir);
    const log = capturingLogger('debug');
    svc = await startTestService({ env: { DATA_DIR: dataDir }, definition: { plugins: [mailProbe()] }, log });
    await svc.service.start();
    await expectStatus(
      await svc.call('POST', '/probe/mail', { body: { to: 'ada@example.com', link: LINK } }),
      202,
    );
    const outbox = join(dataDir, 'outbox');
    const emls = () => (existsSync(outbox) ? readdirSync(outbox).filter((f) => f.endsWith('.eml')) : []);
    await until(
      () => emls().length === 1 && existsSync(join(outbox, 'index.jsonl')),
      10_000,
      'the .eml file',
    );
    const [file] = emls();
    expect(file).toMatch(/^\d{4}-\d\d-\d\dT[\d-]+Z-[0-9a-f-]{36}\.eml$/);
    const mail = await simpleParser(readFileSync(join(outbox, file!), 'utf8'));
    expect(mail.subject).toBe('A probe from Acme');
    expect(mail.text).toContain(LINK);
    const index = readFileSync(join(outbox, 'index.jsonl'), 'utf8').trim().split('\n');
    expect(index.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({
        to: 'ada@example.com',
        subject: 'A probe from Acme',
        link: LINK,
        file: join(outbox, file!),
      }),
    ]);
    const lines = log.lines.filter((l) => String(l.msg).startsWith('message in the development outbox'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ subject: 'A probe from Acme', file: join(outbox, file!) });
    expect(lines[0]!.link).toBeUndefined();
    // No line at any level carries the link, nor its token.
    expect(log.lines.filter((l) => JSON.stringify(l).includes('abc123'))).toEqual([]);
  });

  it('keeps messages in memory with DATA_DIR=memory://, and logs them without their link', async () => {
    const log = capturingLogger('debug');
    svc = await startTestService({ definition: { plugins: [mailProbe()] }, log });
    await svc.service.start();
    await expectStatus(
      await svc.call('POST', '/probe/mail', { body: { to: 'ada@example.com', link: LINK } }),
      202,
    );
    await until(
      () => log.lines.some((l) => String(l.msg).startsWith('message in the development outbox')),
      10_000,
      'the outbox log line',
    );
    const line = log.lines.find((l) => String(l.msg).startsWith('message in the development outbox'));
    expect(line).toMatchObject({ subject: 'A probe from Acme' });
    expect(line!.file).toBeUndefined();
    expect(log.lines.filter((l) => JSON.stringify(l).includes('abc123'))).toEqual([]);
  });
});
