import type { SQL } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';

/** A drizzle handle on the Postgres dialect, the same type on PGlite and on postgres.js. */
export type Database = PgDatabase<PgQueryResultHKT, Record<string, never>>;

/** Work inside one database transaction. */
export interface Transaction {
  readonly db: Database;
  /** Runs raw SQL inside the transaction and returns its rows. */
  query<R = Record<string, unknown>>(statement: SQL): Promise<R[]>;
  /** Called once the transaction has committed (never if it rolls back). */
  afterCommit(fn: () => void): void;
}

/** One set of ordered migrations owned by the core, an adapter or a plugin. */
export interface MigrationSet {
  /** Unique name of the owner, such as `core` or `webhooks`. */
  readonly name: string;
  readonly migrations: readonly Migration[];
}
export interface Migration {
  /** Sortable id such as `0001_init`; never renamed once released. */
  readonly id: string;
  /** The statements, applied in order inside one transaction. */
  readonly statements: readonly string[];
}

export type NotificationHandler = (payload: string) => void;

/**
 * The Storage port: a Postgres database reached through drizzle. Adapters: PGlite (embedded) and
 * postgres.js. Every plugin owns its tables and migrations.
 */
export interface Storage {
  readonly kind: 'pglite' | 'postgres';
  /**
   * Statements the database can usefully run at once for this process: 1 when every statement runs
   * one after another on a single connection (PGlite, on this process's thread, so nothing else
   * arrives while one runs), the pool size for a connection pool (Postgres). Batching code reads this
   * instead of asking which adapter it has: one writer that lingers for a batch to form, or several
   * writers that never make an item wait for a whole batch.
   */
  readonly writeConcurrency: number;
  readonly db: Database;
  /** Runs raw SQL outside any transaction and returns its rows. */
  query<R = Record<string, unknown>>(statement: SQL): Promise<R[]>;
  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
  /** LISTEN on a channel; the returned function stops listening. */
  listen(channel: string, handler: NotificationHandler): Promise<() => Promise<void>>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export class StorageError extends Error {
  constructor(
    readonly code: 'UNAVAILABLE' | 'MIGRATION_FAILED' | 'LOCKED',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StorageError';
  }
}
