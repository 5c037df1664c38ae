import { afterEach, describe, expect, it } from 'bun:test';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { expectStatus } from '../../helpers/expect-status.ts';
import { identityPlugins } from '../../helpers/identity-service.ts';
import { capturingLogger } from '../../helpers/mail.ts';
import { startTestService, type TestService } from '../../helpers/service.ts';
import { until } from '../../helpers/webhooks.ts';

let svc: TestService | undefined;
let dataDir = '';
afterEach(async () => {
  await svc?.stop();
  svc = undefined;
  rmSync(dataDir, { recursive: true, force: true });
});

describe('a password reset with no mail server (the development outbox on PGlite)', () => {
  it('writes the message and its link to DATA_DIR/outbox, never to the log, and the link resets', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'reset-data-'));
    const log = capturingLogger('debug');
    svc = await startTestService({
      env: { DATA_DIR: dataDir, PUBLIC_BASE_URL: 'http://localhost:3000' },
      definition: { plugins: identityPlugins() },
      log,
    });
    await svc.service.start();
    const handle = { type: 'email_address', value: 'ada@example.com' };
    const made = await svc.call('POST', '/persons', { body: { handles: [handle] } });
    await expectStatus(made, 201);
    await expectStatus(
      await svc.call('POST', '/authenticate/password/reset', { key: null, body: { handle } }),
      202,
    );

    const outbox = join(dataDir, 'outbox');
    const emls = () => (existsSync(outbox) ? readdirSync(outbox).filter((f) => f.endsWith('.eml')) : []);
    await until(() => emls().length === 1, 15_000, 'the .eml file');
    const mail = await simpleParser(readFileSync(join(outbox, emls()[0]!), 'utf8'));
    expect(mail.subject).toBe('Reset your Acme password');
    const link = /http:\/\/localhost:3000\/password\/reset\?token=([A-Za-z0-9_-]{43})/.exec(mail.text ?? '');
    expect(link).not.toBeNull();
    const [listed] = readFileSync(join(outbox, 'index.jsonl'), 'utf8').trim().split('\n');
    expect(JSON.parse(listed!)).toMatchObject({ subject: 'Reset your Acme password', link: link![0] });
    const line = log.lines.find((l) => String(l.msg).startsWith('message in the development outbox'));
    expect(line).toMatchObject({ subject: 'Reset your Acme password' });

    const confirmed = await svc.call('POST', '/authenticate/password/reset/confirm', {
      key: null,
      body: { token: link![1], password: 'a new passphrase for ada' },
    });
    await expectStatus(confirmed, 204);
    await expectStatus(
      await svc.call('POST', '/authenticate/password', {
        key: null,
        body: { handle, password: 'a new passphrase for ada' },
      }),
      200,
    );
    // Not one line, at any level, carries the token: not the outbox's, not a request's, not the queue's.
    expect(log.lines.filter((l) => JSON.stringify(l).includes(link![1]!))).toEqual([]);
  });
});
