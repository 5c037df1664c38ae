import { availableParallelism } from 'node:os';
import type { Env } from './config.ts';
import { masterKeyRequired, repeatedKeyIds } from './config-master-key.ts';
import { type EnvSettings, list } from './config-schema.ts';
import { isTooWideAllowance, WIDEST_ALLOWANCE } from './net/address.ts';

/**
 * What is wrong with settings that each pass their own rule: ones another setting makes required or
 * rules out, and a variable no longer read. `env` is the environment as given, for the retired names.
 */
export function settingProblems(e: EnvSettings, env: Env): string[] {
  const problems: string[] = [];
  const production = e.NODE_ENV === 'production';
  if (!e.MASTER_KEY && (production || e.DATABASE_URL)) problems.push(masterKeyRequired(production));
  if (production && !e.PUBLIC_BASE_URL) problems.push('PUBLIC_BASE_URL is required when NODE_ENV=production');
  const mail = mailProblem(e);
  if (mail) problems.push(mail);
  if (e.WORKERS !== 'auto' && Number(e.WORKERS) > 1 && !e.DATABASE_URL)
    problems.push(
      `WORKERS=${e.WORKERS} needs DATABASE_URL: the embedded database (PGlite) has one writer, so it runs in one process (set WORKERS=1, or use Postgres for several)`,
    );
  if (e.MASTER_KEY) {
    const twice = repeatedKeyIds(list(e.MASTER_KEY));
    if (twice.length)
      problems.push(`MASTER_KEY must give each key once, under its own id (repeated: ${twice.join(', ')})`);
  }
  // Outside development an allowance is an exception to the address guard, never a way to switch it off.
  for (const name of ['DELIVERY_ALLOW_PRIVATE', 'SSO_ALLOW_PRIVATE', 'CLIENT_JWKS_ALLOW_PRIVATE'] as const) {
    const wide = e.NODE_ENV === 'development' ? [] : list(e[name]).filter(isTooWideAllowance);
    if (wide.length)
      problems.push(
        `${name} must name ranges no wider than /${WIDEST_ALLOWANCE.ipv4} (IPv4) or /${WIDEST_ALLOWANCE.ipv6} (IPv6) unless NODE_ENV=development (got ${wide.join(', ')})`,
      );
  }
  // An earlier setting, now replaced: left set, it would silently give every client the proxy's address.
  if (env.CLIENT_IP_HEADER)
    problems.push(
      'CLIENT_IP_HEADER is no longer read: set TRUSTED_PROXY_HOPS to the number of proxies in front that append to X-Forwarded-For',
    );
  if (e.METRICS_HOST && e.METRICS_PORT === undefined)
    problems.push(
      `METRICS_HOST is set (${JSON.stringify(e.METRICS_HOST)}) but METRICS_PORT is not: metrics are off until METRICS_PORT names their port`,
    );
  // With WORKERS, worker i serves its metrics on METRICS_PORT + i: the whole range must fit and miss PORT.
  if (e.METRICS_PORT !== undefined && Number(e.METRICS_PORT) !== 0) {
    const first = Number(e.METRICS_PORT);
    const count = workersFor(e.WORKERS, e.DATABASE_URL);
    const last = first + count - 1;
    const range = count > 1 ? `${first} to ${last}, one port per worker` : String(first);
    if (last > 65535)
      problems.push(
        `METRICS_PORT must leave room for one port per worker: ${count} workers from ${first} go past 65535`,
      );
    else if (Number(e.PORT) >= first && Number(e.PORT) <= last)
      problems.push(
        count > 1
          ? `METRICS_PORT must keep PORT (${Number(e.PORT)}) out of the metrics ports (${range}): metrics have listeners of their own, off the public port`
          : `METRICS_PORT must differ from PORT (both are ${first}): metrics have a listener of their own, off the public port`,
      );
  }
  return problems;
}

/**
 * Where messages go must be a choice in production: without SMTP_URL, password reset and verification
 * links would reach nobody but the development outbox, which only MAIL_OUTBOX=true asks for.
 */
function mailProblem(e: EnvSettings): string | undefined {
  if (e.SMTP_URL && e.MAIL_OUTBOX === 'true')
    return 'SMTP_URL and MAIL_OUTBOX=true are both set: choose one (SMTP_URL sends messages, MAIL_OUTBOX=true keeps them in the development outbox)';
  if (e.SMTP_URL) return undefined;
  if (e.MAIL_OUTBOX === 'false')
    return 'SMTP_URL is required when MAIL_OUTBOX=false: messages (password reset and email verification links) need a transport';
  if (e.NODE_ENV === 'production' && e.MAIL_OUTBOX !== 'true')
    return 'SMTP_URL is required when NODE_ENV=production: password reset and email verification links would reach nobody (set MAIL_OUTBOX=true to keep messages in the development outbox under DATA_DIR/outbox on purpose)';
  return undefined;
}

/** WORKERS as a count: `auto` is one per core on Postgres, and one on the embedded database. */
export function workersFor(setting: string, databaseUrl: string | undefined): number {
  if (setting !== 'auto') return Number(setting);
  return databaseUrl ? Math.max(1, Math.min(64, availableParallelism())) : 1;
}
