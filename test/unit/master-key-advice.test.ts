import { describe, expect, it } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../core/config.ts';
import { createLogger } from '../../core/log.ts';
import { resolveMasterKeyEntries } from '../../core/master-key.ts';
import { expectStatus } from '../helpers/expect-status.ts';
import { freshPglite } from '../helpers/pglite.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const RW = '/organizations/attributes/end_user_read_write';

/** The MASTER_KEY the refusal tells the operator to set, with its placeholders filled in. */
function advisedMasterKey(message: string, newKey: string, fileKey: string): string {
  const advice = /\(MASTER_KEY=([^)]+)\)/.exec(message)?.[1];
  if (!advice) throw new Error(`the refusal gives no MASTER_KEY to set: ${message}`);
  return advice.replace('<key>', newKey).replace("<the file's key>", fileKey);
}

describe('a MASTER_KEY set beside a generated master.key', () => {
  it('is refused with advice that, followed, lets secrets reseal and the file key go', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mk-advice-'));
    const log = createLogger('silent');
    const storage = await freshPglite();
    const services: TestService[] = [];
    const start = async (masterKey: string) => {
      const t = await startTestService({ storage, env: { MASTER_KEY: masterKey } });
      services.push(t);
      return t;
    };
    try {
      const [fileKey] = resolveMasterKeyEntries(loadConfig({ DATA_DIR: dir }), log);
      // The embedded database's secrets, sealed with the generated key as it is used: bare, no id.
      const before = await start(fileKey!);
      await expectStatus(await before.call('PUT', RW, { body: { plan: 'pro' } }), 204);

      const newKey = btoa('n'.repeat(32));
      let message = '';
      try {
        resolveMasterKeyEntries(loadConfig({ DATA_DIR: dir, MASTER_KEY: `new:${newKey}` }), log);
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message).toContain('MASTER_KEY does not list the key in');
      const advised = advisedMasterKey(message, newKey, fileKey!);
      const entries = resolveMasterKeyEntries(loadConfig({ DATA_DIR: dir, MASTER_KEY: advised }), log);

      const rotating = await start(entries.join(','));
      expect((await rotating.service.reseal())['attributes.value']).toBe(1);

      const after = await start(`new:${newKey}`);
      const read = await after.call('GET', RW, { orgId: before.org.id, key: before.apiKey });
      await expectStatus(read, 200);
      expect(read.json.result).toEqual({ plan: 'pro' });
    } finally {
      for (const t of services.reverse()) await t.stop();
      await storage.close();
      rmSync(dir, { recursive: true });
    }
  }, 60_000);
});
