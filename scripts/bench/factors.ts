/**
 * Authentication factors over HTTP (issue 37): passkey sign-ins/s (the options, then the assertion
 * verified, the token and AuthenticationSucceeded_v1) beside raw ECDSA P-256 verifications/s with
 * WebCrypto in the same run; TOTP second steps/s (POST /authenticate/mfa with a code, after a password
 * first factor answered an mfa_token). The service is the real entry in its own process, on its embedded
 * PGlite, and on Postgres when given a database. Passkeys come from a software authenticator
 * (scripts/bench/software-authenticator.ts), registered first through the registration API; TOTP codes
 * are computed here (RFC 6238 with node:crypto).
 *
 * `npm run bench -- factors`.
 */
import { availableParallelism, loadavg } from 'node:os';
import { cpuSeconds } from './cpu.ts';
import { type ServiceProcess, startEmbeddedService, startPostgresService } from './service-process.ts';
import { SoftwareAuthenticator, signedSample } from './software-authenticator.ts';
import { fmtMs, fmtRate, percentile, row } from './stats.ts';
import { stepOf, totpCode } from './totp-code.ts';

const PASSWORD = 'correct horse battery staple';

/** Limits against guessing and floods, not what this measures (one address sends everything). */
const UNLIMITED = {
  PASSWORD_HANDLE_RATE_LIMIT: '1000000/1000000',
  PASSWORD_ADDRESS_RATE_LIMIT: '1000000/1000000',
  PASSKEY_ADDRESS_RATE_LIMIT: '1000000/1000000',
  TOTP_PERSON_RATE_LIMIT: '1000000/1000000',
  TOTP_ADDRESS_RATE_LIMIT: '1000000/1000000',
  MFA_TOKEN_RATE_LIMIT: '1000000/1000000',
  MFA_ADDRESS_RATE_LIMIT: '1000000/1000000',
};

/** What one row measured: operations/s, each operation's time and its legs', server CPU per operation. */
interface Measure {
  count: number;
  perSecond: number;
  total: number[];
  legs: Record<string, number[]>;
  cpuMs: number;
}

/**
 * `op` by `inflight` loops for `seconds` or `max` operations, whichever ends first; `op` answers the
 * time of each of its legs (ms).
 */
async function drive(
  op: (w: number) => Promise<Record<string, number>>,
  o: { inflight: number; seconds: number; max: number; cpu: () => number },
): Promise<Measure> {
  const m: Measure = { count: 0, perSecond: 0, total: [], legs: {}, cpuMs: Number.NaN };
  const cpu0 = o.cpu();
  let started = 0;
  const t0 = performance.now();
  const end = t0 + o.seconds * 1000;
  await Promise.all(
    Array.from({ length: o.inflight }, async (_, w) => {
      while (performance.now() < end && started < o.max) {
        started++;
        const s = performance.now();
        const legs = await op(w);
        m.total.push(performance.now() - s);
        for (const [name, ms] of Object.entries(legs)) {
          m.legs[name] ??= [];
          m.legs[name].push(ms);
        }
      }
    }),
  );
  m.count = m.total.length;
  m.perSecond = (m.count / (performance.now() - t0)) * 1000;
  m.cpuMs = ((o.cpu() - cpu0) * 1000) / m.count;
  return m;
}

/** CPU seconds the server's processes used so far (every thread). */
const serverCpu = (s: ServiceProcess) => () =>
  s.pids().reduce((sum, pid) => sum + (cpuSeconds(pid) ?? Number.NaN), 0);

/** CPU seconds this process used so far. */
const ownCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

/**
 * Waits (at most 20 s) until the server is idle: under 5 % of a core over a quarter second, its workers
 * done with what the previous row queued (events, webhooks), so that a row does not pay for the last.
 */
async function settle(s: ServiceProcess): Promise<void> {
  const cpu = serverCpu(s);
  const end = performance.now() + 20_000;
  while (performance.now() < end) {
    const before = cpu();
    await Bun.sleep(250);
    if (cpu() - before < 0.0125) return;
  }
}

const p = (xs: number[] | undefined) => {
  const s = [...(xs ?? [])].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p99: percentile(s, 99) };
};

/** A request to the service as the end user's browser sends it: `Service-OrgID` only. */
async function asUser(s: ServiceProcess, path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${s.base}${path}`, {
    method: 'POST',
    headers: { 'Service-OrgID': s.orgId, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`POST ${path} answered ${res.status} ${text.slice(0, 400)}`);
  return (JSON.parse(text) as { result: Record<string, unknown> }).result;
}

/** `n` persons made by `make`, `inflight` at a time. */
async function inParallel<T>(n: number, inflight: number, make: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: inflight }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await make(i);
      }
    }),
  );
  return out;
}

interface Options {
  seconds: number;
  inflight: number;
  /** Persons with TOTP: each second step takes one (a code counts once per step and person). */
  totpPersons: number;
  databaseUrl?: string;
}

/** The rows of one service (PGlite or Postgres). */
async function measureService(
  name: string,
  s: ServiceProcess,
  o: Options,
): Promise<{ rows: string[]; note: string }> {
  const port = new URL(s.base).port;
  const rpId = 'localhost';
  const origin = `http://localhost:${port}`;
  // Passkeys count as a first factor only here; a person with a confirmed TOTP is asked for it.
  await s.admin('PUT', '/organizations/authentication-policy', {
    first_factors: ['password', 'webauthn'],
    second_factor: 'optional',
    second_factors: ['totp'],
    webauthn: { rp_id: rpId, rp_name: 'Bench', origins: [origin] },
  });

  const newPerson = async (handle: string) =>
    (
      (await s.admin('POST', '/persons', { handles: [{ type: 'username', value: handle }] })) as {
        result: { person_id: string };
      }
    ).result.person_id;

  // One passkey per loop in flight: its sign counter goes up one assertion after the other.
  const authenticators = await inParallel(o.inflight, o.inflight, async (i) => {
    const personId = await newPerson(`passkey-${i}`);
    const a = await SoftwareAuthenticator.create(rpId, origin);
    const { result: opened } = (await s.admin(
      'POST',
      `/persons/${personId}/credentials/webauthn/registration-options`,
    )) as { result: { challenge_id: string; options: { challenge: string; user: { id: string } } } };
    const response = await a.register(opened.options);
    await s.admin('POST', `/persons/${personId}/credentials/webauthn`, {
      challenge_id: opened.challenge_id,
      response,
      name: 'Bench',
    });
    return { a, personId };
  });
  const passkeySignIn = async (w: number) => {
    const { a, personId } = authenticators[w]!;
    const t0 = performance.now();
    const opened = (await asUser(s, '/authenticate/webauthn/options', {})) as {
      challenge_id: string;
      options: { challenge: string };
    };
    const t1 = performance.now();
    const response = await a.assert(opened.options.challenge);
    const t2 = performance.now();
    const done = await asUser(s, '/authenticate/webauthn', { challenge_id: opened.challenge_id, response });
    if (typeof done.token !== 'string' || done.person_id !== personId)
      throw new Error(`the passkey sign-in answered ${JSON.stringify(done)}`);
    return { options: t1 - t0, sign: t2 - t1, verify: performance.now() - t2 };
  };
  for (let i = 0; i < 20; i++) await passkeySignIn(i % o.inflight); // warm up, unmeasured

  // TOTP persons: a password and a confirmed authenticator each.
  const totpPeople = await inParallel(o.totpPersons, 4, async (i) => {
    const handle = `totp-${i}`;
    const personId = await newPerson(handle);
    await s.admin('PUT', `/persons/${personId}/credentials/password`, { password: PASSWORD });
    const { result: enrolled } = (await s.admin('POST', `/persons/${personId}/credentials/totp`, {
      name: 'Phone',
    })) as { result: { credential_id: string; secret: string } };
    const confirmedStep = stepOf(Date.now());
    await s.admin('POST', `/persons/${personId}/credentials/totp/${enrolled.credential_id}/confirm`, {
      code: totpCode(enrolled.secret, confirmedStep),
    });
    return { handle, personId, secret: enrolled.secret, confirmedStep, mfaToken: '' };
  });

  const rows: string[] = [];
  const line = (what: string, m: Measure, legs: string, bound?: Measure) => {
    const t = p(m.total);
    rows.push(
      row([
        `${name}: ${what}`,
        fmtRate(m.perSecond),
        fmtMs(t.p50),
        fmtMs(t.p99),
        legs,
        fmtMs(m.cpuMs),
        bound ? (m.perSecond / bound.perSecond).toPrecision(2) : '',
        m.count,
      ]),
    );
  };
  const legText = (m: Measure, names: string[]) =>
    names
      .map((n) => {
        const l = p(m.legs[n]);
        return `${n} ${fmtMs(l.p50)} / ${fmtMs(l.p99)}`;
      })
      .join(', ');

  // The bound, in this process, right before the sign-ins it bounds.
  await settle(s);
  const sample = await signedSample();
  const bound = await drive(
    async () => {
      if (!(await sample.verify())) throw new Error('the ECDSA signature did not verify');
      return {};
    },
    { inflight: o.inflight, seconds: o.seconds, max: Number.POSITIVE_INFINITY, cpu: ownCpu },
  );
  line(`bound: raw ECDSA P-256 verify (WebCrypto, this process), ${o.inflight} in flight`, bound, '');
  let busy: Measure | undefined;
  for (const inflight of [1, o.inflight]) {
    await settle(s);
    const m = await drive(passkeySignIn, { inflight, seconds: o.seconds, max: 20_000, cpu: serverCpu(s) });
    busy = m;
    line(
      `passkey sign-in (options, assertion, token), ${inflight} in flight`,
      m,
      legText(m, ['options', 'sign', 'verify']),
      bound,
    );
  }

  // First factors: each person's password answers an mfa_token (argon2id at the default cost).
  await settle(s);
  let nextFirst = 0;
  const first = await drive(
    async () => {
      const person = totpPeople[nextFirst++]!;
      const done = await asUser(s, '/authenticate/password', {
        handle: { type: 'username', value: person.handle },
        password: PASSWORD,
      });
      if (done.mfa_required !== true || typeof done.mfa_token !== 'string')
        throw new Error(`the password sign-in answered no second step: ${JSON.stringify(done)}`);
      person.mfaToken = done.mfa_token;
      return {};
    },
    { inflight: o.inflight, seconds: 600, max: totpPeople.length, cpu: serverCpu(s) },
  );
  line(`password first factor -> mfa_token, ${o.inflight} in flight`, first, '');

  // Second steps: each person once, with the code of the current step (the next one when the
  // confirmation used the current step: one step of drift is accepted).
  await settle(s);
  let nextSecond = 0;
  const second = await drive(
    async () => {
      const person = totpPeople[nextSecond++]!;
      const now = stepOf(Date.now());
      const code = totpCode(person.secret, now > person.confirmedStep ? now : person.confirmedStep + 1);
      const done = await asUser(s, '/authenticate/mfa', { mfa_token: person.mfaToken, method: 'totp', code });
      if (typeof done.token !== 'string') throw new Error(`the second step answered ${JSON.stringify(done)}`);
      return {};
    },
    { inflight: o.inflight, seconds: o.seconds, max: totpPeople.length, cpu: serverCpu(s) },
  );
  line(`TOTP second step (POST /authenticate/mfa), ${o.inflight} in flight`, second, '');
  const share = busy ? ((bound.cpuMs / busy.cpuMs) * 100).toFixed(1) : '-';
  return {
    rows,
    note: `on ${name}, a raw verification's CPU time is ${share} % of a passkey sign-in's server CPU time (${o.inflight} in flight)`,
  };
}

export async function benchFactors(o: Options): Promise<string> {
  const rows: string[] = [];
  const notes: string[] = [];
  const targets: Array<[string, () => Promise<ServiceProcess>]> = [
    ['PGlite', () => startEmbeddedService(UNLIMITED)],
  ];
  if (o.databaseUrl) {
    const url = o.databaseUrl;
    targets.push(['Postgres', () => startPostgresService(url, UNLIMITED)]);
  }
  for (const [name, start] of targets) {
    const s = await start();
    try {
      const measured = await measureService(name, s, o);
      rows.push(...measured.rows);
      notes.push(measured.note);
    } finally {
      await s.stop();
    }
  }
  return [
    `The service is the real entry (\`bun entry/bun.ts\`, every plugin of service.config.ts, LOG_LEVEL=warn, rate limits lifted) in its own process, on its embedded PGlite in a temporary data directory, and on Postgres (a schema of its own, the Postgres-backed queue); the client is this benchmark's process on the same two cores. A passkey sign-in is POST /authenticate/webauthn/options (a discoverable-credential challenge stored), the assertion made by a software authenticator in this process (an ES256 key from WebCrypto, authenticator data and client data JSON per the WebAuthn spec, registered before through the registration API with a "none" attestation), and POST /authenticate/webauthn (the challenge taken, the passkey found, the signature verified by @simplewebauthn/server, the sign counter recorded, the token minted with TokenMinted_v1, AuthenticationSucceeded_v1); one passkey per loop in flight. The bound is raw ECDSA P-256 verifications (WebCrypto, SHA-256 over 69 bytes as an assertion signs) in this process, measured just before; the fraction is of it. A TOTP second step is POST /authenticate/mfa {mfa_token, method: totp, code} (the mfa_token checked and spent, the secret unsealed, the code checked by otpauth with one step of drift and its step remembered, the token with both factors, AuthenticationSucceeded_v1), the code computed here (RFC 6238, node:crypto); a code counts once per step and person, so each second step is another of ${o.totpPersons} persons, whose password first factor (argon2id at the default cost) answered the mfa_token just before (its own row). ${o.seconds} s or the persons available per row, whichever ends first. "CPU ms each" is the server process's CPU time (every thread, read from /proc) per operation, for the bound this process's; on Postgres the database's own time is not in it. Before each row the server is let go idle (its workers done with the events the last row queued). Load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores when it ended: on a machine this busy the server waits for a core more than it computes, and the CPU time per operation compares better than the rates.`,
    '',
    row([
      'path',
      'operations/s',
      'p50 ms',
      'p99 ms',
      'legs p50 / p99 ms',
      'CPU ms each',
      'fraction of bound',
      'count',
    ]),
    row(['---', '---', '---', '---', '---', '---', '---', '---']),
    ...rows,
    '',
    `The signature check is a small part of a sign-in: ${notes.join('; ')}.`,
  ].join('\n');
}
