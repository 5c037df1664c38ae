/**
 * The benchmarks: `npm run bench -- [bus] [http] [attributes] [tokens] [password] [webhooks] [deliveries] [hook] [sso] [ingest] [oauth2] [oauth2-agents] [oauth2-refresh] [oauth2-code] [sessions] [mail] [factors] [--write]`. Each section reports p50/p99 and throughput
 * next to the bound it chases, measured in the same run. `--write` records the tables in BENCHMARKS.md.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchAttributes } from './attributes.ts';
import { benchBus } from './bus.ts';
import { benchDeliveries } from './deliveries.ts';
import { benchFactors } from './factors.ts';
import { benchHook } from './hook.ts';
import { benchHttp } from './http.ts';
import { benchIngest } from './ingest.ts';
import { benchMail } from './mail.ts';
import { benchOAuth2 } from './oauth2.ts';
import { benchOAuth2Agents } from './oauth2-agents.ts';
import { benchOAuth2Code, benchOAuth2Refresh } from './oauth2-authorize.ts';
import { benchPassword } from './password.ts';
import { ROOT } from './processes.ts';
import { benchSessions } from './sessions.ts';
import { benchSso } from './sso.ts';
import { benchTokens } from './tokens.ts';
import { benchWebhooks } from './webhooks.ts';

const args = process.argv.slice(2);
const write = args.includes('--write');
const wanted = args.filter((a) => !a.startsWith('--'));
const all = wanted.length === 0;
const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

const sections: Record<string, () => Promise<string>> = {
  bus: () => benchBus({ n: 20_000, inflight: 256, databaseUrl, natsUrl }),
  http: () => benchHttp({ seconds: 5, concurrency: 64 }),
  attributes: () => benchAttributes({ seconds: 3, inflight: 32, databaseUrl }),
  tokens: () => benchTokens({ seconds: 3, inflight: 32, databaseUrl }),
  password: () => benchPassword({ seconds: 3, inflight: 8 }),
  webhooks: () => benchWebhooks({ deliveries: 5000, inflight: 64, databaseUrl, natsUrl }),
  deliveries: () =>
    benchDeliveries({ databaseUrl, natsUrl, deliveries: 20_000, inflight: 8, pacedSeconds: 3 }),
  hook: () => benchHook({ n: 3000 }),
  'oauth2-refresh': () => benchOAuth2Refresh({ seconds: 3, inflight: 16, databaseUrl }),
  'oauth2-code': () => benchOAuth2Code({ seconds: 3, inflight: 8, databaseUrl, lastSteps: 100 }),
  sso: () => benchSso({ seconds: 3, inflight: 16, callbacks: 200, databaseUrl }),
  ingest: () => benchIngest({ events: 5000, inflight: 64, databaseUrl, natsUrl }),
  oauth2: () => benchOAuth2({ seconds: 5, concurrency: 64, rounds: 3 }),
  'oauth2-agents': () =>
    benchOAuth2Agents({ seconds: 3, inflight: 16, max: 15_000, codesPerWorker: 64, databaseUrl }),
  sessions: () => benchSessions({ seconds: 5, inflight: 8, rounds: 3, max: 5000, databaseUrl }),
  mail: () => benchMail({ seconds: 3, inflight: 32, persons: 200, serial: 50 }),
  factors: () => benchFactors({ seconds: 3, inflight: 8, totpPersons: 300, databaseUrl }),
};

const results: Record<string, string> = {};
for (const [name, run] of Object.entries(sections)) {
  if (!all && !wanted.includes(name)) continue;
  console.error(`running ${name} ...`);
  results[name] = await run();
  console.log(`\n### ${name}\n\n${results[name]}\n`);
}

if (write) {
  const file = join(ROOT, 'BENCHMARKS.md');
  let text = readFileSync(file, 'utf8');
  const stamp = `Recorded ${new Date().toISOString().slice(0, 10)} with \`npm run bench -- ${Object.keys(results).join(' ')} --write\` (Bun ${Bun.version}).`;
  for (const [name, table] of Object.entries(results)) {
    const start = `<!-- bench:${name} -->`;
    const end = `<!-- /bench:${name} -->`;
    const block = `${start}\n${stamp}\n\n${table}\n${end}`;
    const re = new RegExp(`${start}[\\s\\S]*?${end}`);
    text = re.test(text) ? text.replace(re, block) : `${text.trimEnd()}\n\n${block}\n`;
  }
  writeFileSync(file, text);
  console.error('BENCHMARKS.md updated');
}
process.exit(0);
