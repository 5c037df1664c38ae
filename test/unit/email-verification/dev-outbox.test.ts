import { afterEach, describe, expect, it } from 'bun:test';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

describe('an email verification with no mail server (the development outbox)', () => {
  it('lists the link in DATA_DIR/outbox/index.jsonl and never writes it to the log', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'verify-data-'));
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
    const personId = made.json.result.person_id as string;
    await expectStatus(
      await svc.call('POST', `/persons/${personId}/handles/verify`, { body: { handle } }),
      202,
    );
    const index = join(dataDir, 'outbox', 'index.jsonl');
    await until(() => existsSync(index), 15_000, 'the outbox index');
    const listed = JSON.parse(readFileSync(index, 'utf8').trim());
    const token = /\/email\/verify\?token=([A-Za-z0-9_-]{43})$/.exec(listed.link)?.[1];
    expect(token).toBeDefined();
    // The page the link opens is requested too: its request line carries the path, not the token.
    await expectStatus(
      await svc.call('GET', `/email/verify?token=${token}`, { key: null, orgId: null }),
      200,
    );
    expect(log.lines.some((l) => String(l.msg).startsWith('message in the development outbox'))).toBe(true);
    expect(log.lines.filter((l) => JSON.stringify(l).includes(token!))).toEqual([]);
  });
});
