import { describe, expect, it } from 'bun:test';
import { pendingStatements } from '../../scripts/db-generate.ts';
import { migrationSources } from '../../scripts/migration-sources.ts';

const sources = await migrationSources();

describe('generated migrations', () => {
  it('finds every owner of tables by convention, with no central list', () => {
    expect(sources.map((s) => s.name).sort()).toEqual(
      [
        'attributes',
        'core',
        'local-keys',
        'nats-outbox',
        'oauth2',
        'oauth2-authorize',
        'password',
        'passkeys',
        'persons',
        'sso-signin',
        'pg-queue',
        'sso',
        'tokens',
        'webhooks',
        'roles',
        'consents',
        'sdk',
        'totp',
        'email-codes',
        'factors',
      ].sort(),
    );
  });

  it.each(sources.map((s) => [s.name, s] as const))(
    '%s has a migration for every schema change',
    async (_, source) => {
      const { statements } = await pendingStatements(source.dir, source.schema);
      expect(statements).toEqual([]);
    },
  );
});
