import type { MigrationSet } from 'identity-service/core';

/**
 * The plugin's tables. A plugin owns its migrations: the service applies each set once, in id order,
 * inside a transaction, on PGlite and Postgres alike. Ids are never renamed once released.
 */
export const migrations: MigrationSet = {
  name: 'plan-claims',
  migrations: [
    {
      id: '0001_init',
      statements: [
        `create table if not exists plan_claims_plans (
           org_id text primary key,
           plan text not null,
           updated_at timestamptz not null default now()
         )`,
      ],
    },
  ],
};
