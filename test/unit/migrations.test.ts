import { describe, expect, it } from 'bun:test';
import { pendingStatements } from '../../scripts/db-generate.ts';
import { migrationSources } from '../../scripts/migration-sources.ts';

describe('generated migrations', () => {
  it.each(migrationSources.map((s) => [s.name, s] as const))(
    '%s has a migration for every schema change',
    async (_, source) => {
      const { statements } = await pendingStatements(source.dir, source.schema);
      expect(statements).toEqual([]);
    },
  );
});
