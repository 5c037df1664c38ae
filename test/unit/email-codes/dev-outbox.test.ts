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

describe('email sign-in with no mail server (the development outbox)', () => {
  it('writes the code and the link to DATA_DIR/outbox, never to the log, and both sign in', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'email-codes-data-'));
    const log = capturingLogger('debug');
    svc = await startTestService({
      env: { DATA_DIR: dataDir, PUBLIC_BASE_URL: 'http://localhost:3000' },
      definition: { plugins: identityPlugins() },
      log,
    });
    await svc.service.start();
    const handle = { type: 'email_address', value: 'ada@example.com' };
    await expectStatus(await svc.call('POST', '/persons', { body: { handles: [handle] } }), 201);
    const ask = (method: string) =>
      svc!.call('POST', '/authenticate/email', { key: null, body: { handle, method } });
    const byCode = await ask('otp_via_email');
    await expectStatus(byCode, 202);

    const outbox = join(dataDir, 'outbox');
    const emls = () =>
      existsSync(outbox)
        ? readdirSync(outbox)
            .filter((f) => f.endsWith('.eml'))
            .sort()
        : [];
    await until(() => emls().length === 1, 15_000, 'the code .eml file');
    const codeMail = await simpleParser(readFileSync(join(outbox, emls()[0]!), 'utf8'));
    const code = /^(\d{6})$/m.exec(codeMail.text ?? '')?.[1];
    expect(code).toBeDefined();
    expect(codeMail.subject).toBe('Your Acme sign-in code');
    const signedIn = await svc.call('POST', '/authenticate/email/verify', {
      key: null,
      body: { challenge_id: byCode.json.result.challenge_id, code },
    });
    await expectStatus(signedIn, 200);

    const byLink = await ask('email_link');
    await expectStatus(byLink, 202);
    const lines = () => readFileSync(join(outbox, 'index.jsonl'), 'utf8').trim().split('\n');
    await until(() => lines().length === 2, 15_000, 'the link in index.jsonl');
    const listed = JSON.parse(lines().at(-1)!);
    expect(listed).toMatchObject({ to: 'ada@example.com', subject: 'Sign in to Acme' });
    expect(listed.link).toMatch(/^http:\/\/localhost:3000\/email\/sign-in\?token=[A-Za-z0-9_-]{43}$/);

    // Not one line, at any level, carries the code, the link's token or a challenge_id.
    const token = new URL(listed.link).searchParams.get('token')!;
    const secrets = [code!, token, byCode.json.result.challenge_id, byLink.json.result.challenge_id];
    expect(log.lines.filter((l) => secrets.some((s) => JSON.stringify(l).includes(s)))).toEqual([]);
  });
});
