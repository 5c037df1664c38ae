import { describe, expect, it } from 'bun:test';
import { expectStatus } from '../helpers/expect-status.ts';
import { freshPglite } from '../helpers/pglite.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const RW = '/organizations/attributes/end_user_read_write';
const key = (c: string) => btoa(c.repeat(32));

describe('start-up with a MASTER_KEY that cannot open the stored secrets', () => {
  it('stops with one message naming the key, and starts with the right key or during a rotation', async () => {
    const storage = await freshPglite();
    // A start that fails closes what it was given: the database stays open across the attempts here.
    const kept = { ...storage, close: async () => {} };
    const services: TestService[] = [];
    const start = async (masterKey: string) => {
      const t = await startTestService({ storage: kept, env: { MASTER_KEY: masterKey } });
      services.push(t);
      return t;
    };
    const refusal = async (masterKey: string) => {
      try {
        await start(masterKey);
      } catch (e) {
        return (e as Error).message;
      }
      throw new Error(`started with MASTER_KEY ${masterKey.split(':')[0]}, which opens none of the secrets`);
    };
    try {
      const first = await start(`k1:${key('a')}`);
      // Secrets of several kinds: the organizations' token keys, an attribute.
      await expectStatus(await first.call('PUT', RW, { body: { plan: 'pro' } }), 204);
      await expectStatus(await first.call('GET', '/.well-known/jwks.json'), 200);

      // Another key under the same id (what a freshly generated key looks like), then an unknown id.
      const sameId = await refusal(`k1:${key('b')}`);
      expect(sameId).toContain('MASTER_KEY does not open the secrets this database holds');
      expect(sameId).toContain('another key of the same id');
      const otherId = await refusal(`k2:${key('b')}`);
      expect(otherId).toContain('a key id MASTER_KEY does not list');
      expect(otherId).toContain('attributes.value');

      // A rotation lists the old key after the new one: it starts, and reads what the old key sealed.
      const rotating = await start(`k2:${key('b')},k1:${key('a')}`);
      const read = await rotating.call('GET', RW, { orgId: first.org.id, key: first.apiKey });
      await expectStatus(read, 200);
      expect(read.json.result).toEqual({ plan: 'pro' });
    } finally {
      for (const t of services.reverse()) await t.stop();
      await storage.close();
    }
  }, 60_000);
});
