/**
 * Password sign-ins/s: POST /authenticate/password through `service.fetch` with the persons, tokens and
 * password plugins on PGlite, beside the bound that sets them: argon2id verifications/s with the same
 * parameters and as many in flight.
 */
import { hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2';
import { createPgliteStorage } from '../../adapters/pglite/index.ts';
import { loadConfig } from '../../core/config.ts';
import { createService } from '../../entry/create-service.ts';
import { type Argon2Params, DEFAULT_ARGON2 } from '../../plugins/password/hashing/hashing.ts';
import { password } from '../../plugins/password/index.ts';
import { persons } from '../../plugins/persons/index.ts';
import { tokens } from '../../plugins/tokens/index.ts';
import { rate } from './attributes.ts';
import { fmtMs, fmtRate, row } from './stats.ts';

const SECRET = 'correct horse battery staple';
const UNLIMITED = { perMinute: 1_000_000, burst: 1_000_000 };

/** Sign-ins/s on PGlite with the given argon2id parameters. */
async function signInRate(o: { seconds: number; inflight: number }, argon2: Argon2Params) {
  const ms = o.seconds * 1000;
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: 'memory://',
    LOG_LEVEL: 'silent',
    MASTER_KEY: `bench:${btoa('b'.repeat(32))}`,
    PUBLIC_BASE_URL: 'https://ids.bench',
  });
  const service = await createService(config, {
    overrides: { storage: await createPgliteStorage() },
    definition: {
      plugins: [
        persons(),
        tokens(),
        // The limits would refuse a benchmark's attempts: they are not what is measured here.
        password({ handleRateLimit: UNLIMITED, addressRateLimit: UNLIMITED, argon2 }),
      ],
    },
  });
  const { organization, apiKey } = await service.ctx.orgs.create('bench');
  const h = service.ctx.headers;
  const call = async (method: string, path: string, body: unknown, key = true) => {
    const res = await service.fetch(
      new Request(`http://localhost${path}`, {
        method,
        headers: {
          [h.orgId]: organization.id,
          ...(key ? { [h.apiKey]: apiKey } : {}),
          'content-type': 'application/json',
        },
        body: JSON.stringify(body),
      }),
    );
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status} ${text}`);
    return text ? (JSON.parse(text) as { result: { person_id: string } }) : undefined;
  };
  const users = Array.from({ length: o.inflight * 4 }, (_, i) => `user${i}`);
  for (const value of users) {
    const made = await call('POST', '/persons', { handles: [{ type: 'username', value }] });
    await call('PUT', `/persons/${made!.result.person_id}/credentials/password`, { password: SECRET });
  }
  let n = 0;
  const signIn = () =>
    call(
      'POST',
      '/authenticate/password',
      { handle: { type: 'username', value: users[n++ % users.length] }, password: SECRET },
      false,
    );
  for (let i = 0; i < users.length; i++) await signIn(); // every person's first token
  const measured = await rate(signIn, o.inflight, ms);
  await service.stop();
  return measured;
}

export async function benchPassword(o: { seconds: number; inflight: number }): Promise<string> {
  const ms = o.seconds * 1000;
  const p = DEFAULT_ARGON2;
  const params = { memoryCost: p.memoryKiB, timeCost: p.iterations, parallelism: p.parallelism };
  const encoded = await argon2Hash(SECRET, params);
  const bound = await rate(() => argon2Verify(encoded, SECRET), o.inflight, ms);

  const measured = await signInRate(o, p);
  // The same sign-ins with argon2id at its cheapest: what everything but the hash costs.
  const rest = await signInRate(o, { memoryKiB: 8, iterations: 1, parallelism: 1 });

  const line = (name: string, s: typeof bound, of?: typeof bound) =>
    row([
      name,
      fmtRate(s.perSecond),
      fmtMs(s.p50),
      fmtMs(s.p99),
      of ? (s.perSecond / of.perSecond).toFixed(2) : '',
    ]);
  return [
    `POST /authenticate/password through \`service.fetch\` in this process with the persons, tokens and password plugins on PGlite, ${o.seconds} s per row, ${o.inflight} in flight over ${o.inflight * 4} persons (rate limits lifted): handle lookup, one argon2id verification, the token (signed, TokenMinted_v1) and AuthenticationSucceeded_v1. argon2id parameters: m=${p.memoryKiB} KiB, t=${p.iterations}, p=${p.parallelism} (the defaults; PASSWORD_ARGON2_* set them). The fraction is of raw argon2id verifications in the same run.`,
    '',
    row(['path', 'operations/s', 'p50 ms', 'p99 ms', 'fraction of bound']),
    row(['---', '---', '---', '---', '---']),
    line(`bound: raw argon2id verify (@node-rs/argon2), ${o.inflight} in flight`, bound),
    line(`password sign-in on PGlite, ${o.inflight} in flight`, measured, bound),
    line(`the same sign-ins with argon2id at m=8 KiB, t=1 (all but the hash), ${o.inflight} in flight`, rest),
  ].join('\n');
}
