import { describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { createPgliteStorage } from '../../../adapters/pglite/index.ts';
import { migrate } from '../../../core/db/migrate.ts';
import { migrations } from '../../../plugins/sso/migrations/index.ts';

describe('the callback ID migration', () => {
  it('gives every credential made before it a callback ID of its own', async () => {
    const storage = await createPgliteStorage();
    try {
      const [init] = migrations.migrations;
      await migrate(storage, [{ name: migrations.name, migrations: [init!] }]);
      for (const [org, id, clientId] of [
        ['0190a5b4-7c6d-7e8f-9a0b-1c2d3e4f5a6b', '0190a5b4-7c6d-7e8f-9a0b-1c2d3e4f5a01', 'same-client'],
        ['0190a5b4-7c6d-7e8f-9a0b-1c2d3e4f5a6c', '0190a5b4-7c6d-7e8f-9a0b-1c2d3e4f5a02', 'same-client'],
        ['0190a5b4-7c6d-7e8f-9a0b-1c2d3e4f5a6c', '0190a5b4-7c6d-7e8f-9a0b-1c2d3e4f5a03', 'another'],
      ])
        await storage.db.execute(
          sql`INSERT INTO sso_credentials (org_id, id, client_id, provider, options, client_secret, created_at, updated_at)
              VALUES (${org}, ${id}, ${clientId}, 'google', '{}', 'sealed', 0, 0)`,
        );
      await migrate(storage, [migrations]);
      const rows = await storage.client.query<{ callback_id: string }>(
        'SELECT callback_id FROM sso_credentials',
      );
      const ids = rows.rows.map((r) => r.callback_id);
      expect(ids).toHaveLength(3);
      for (const id of ids)
        expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(new Set(ids).size).toBe(3);
    } finally {
      await storage.close();
    }
  });
});
