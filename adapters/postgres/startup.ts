import type postgres from 'postgres';
import { StorageError } from '../../core/ports/storage.ts';

/**
 * The first contact with the database: the schema (if any) made ready, then one query, all within one deadline.
 * Anything that is not Postgres fails here with a message that says so instead of keeping start-up waiting.
 */
export async function firstContact(
  client: postgres.Sql,
  options: { url: string; schema?: string | undefined; deadlineMs: number },
): Promise<void> {
  const work = (async () => {
    if (options.schema) await ensureSchema(client, options.url, options.schema);
    await client`select 1`;
  })();
  // After the deadline the attempt is abandoned; its late rejection must not surface as unhandled.
  work.catch(() => {});
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(() => resolve('expired'), options.deadlineMs);
  });
  try {
    if ((await Promise.race([work, expired])) === 'expired') {
      throw new StorageError(
        'UNAVAILABLE',
        `${endpoint(options.url)} did not answer as Postgres within ${options.deadlineMs / 1000} s ` +
          `(${redact(options.url)}); is it a Postgres server, and is the URL right?`,
      );
    }
  } catch (cause) {
    // postgres.js would otherwise keep reconnecting to an endpoint that is not Postgres, many times a second.
    await client.end({ timeout: 0 });
    if (cause instanceof StorageError) throw cause;
    throw new StorageError(
      'UNAVAILABLE',
      `cannot reach Postgres at ${redact(options.url)}: ${(cause as Error).message}`,
      { cause },
    );
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Creates the schema only when it is missing: a role that owns a schema made for it beforehand needs no CREATE
 * on the database, and replicas starting together do not trip over one another's create.
 */
async function ensureSchema(client: postgres.Sql, url: string, schema: string): Promise<void> {
  const found = await client`select 1 from pg_namespace where nspname = ${schema}`;
  if (found.length > 0) return;
  try {
    await client`create schema if not exists ${client(schema)}`;
  } catch (cause) {
    const code = (cause as { code?: unknown }).code;
    // Another replica created it between the check and the create: 23505 on pg_namespace, or 42P06.
    if (code === '23505' || code === '42P06') return;
    if (code === '42501') {
      throw new StorageError(
        'UNAVAILABLE',
        `schema "${schema}" does not exist and the role of ${redact(url)} may not create it ` +
          `(${(cause as Error).message}): create the schema beforehand, owned by that role, ` +
          'or grant it CREATE on the database',
        { cause },
      );
    }
    throw cause;
  }
}

/** `host:port` of a connection URL, for messages; the port Postgres listens on unless the URL names another. */
function endpoint(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}`;
  } catch {
    return 'the configured DATABASE_URL';
  }
}

/** Hides the password of a connection URL in messages. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'the configured DATABASE_URL';
  }
}
