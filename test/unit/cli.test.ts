import { afterAll, describe, expect, it } from 'bun:test';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireDataDirLock } from '../../adapters/pglite/lock.ts';
import { TEST_MASTER_KEY } from '../helpers/service.ts';

const ROOT = join(import.meta.dir, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'ids-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(...args: string[]) {
  const r = Bun.spawnSync([process.execPath, join(ROOT, 'scripts/cli.ts'), ...args], {
    env: {
      ...process.env,
      DATA_DIR: dir,
      MASTER_KEY: TEST_MASTER_KEY,
      DATABASE_URL: '',
      NATS_URL: '',
      LOG_LEVEL: 'info',
    },
  });
  return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() };
}

describe('the admin CLI', () => {
  it('creates an organization and prints its ID and API key as JSON, nothing else on stdout', () => {
    const r = cli('org', 'create', '--name', 'Acme');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.out);
    expect(Object.keys(out).sort()).toEqual(['api_key', 'organization_id']);
    expect(out.organization_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(out.api_key).toStartWith('isk_');
    const list = JSON.parse(cli('org', 'list').out);
    expect(list.map((o: { name: string }) => o.name)).toContain('Acme');
  }, 60_000);

  it('rotates an API key and a signing key', () => {
    const { organization_id } = JSON.parse(cli('org', 'create', '--name', 'Rotor').out);
    const key = cli('org', 'api-key', 'rotate', '--org', organization_id);
    expect(key.code).toBe(0);
    expect(JSON.parse(key.out).api_key).toStartWith('isk_');
    const signing = cli('keys', 'rotate', '--org', organization_id);
    expect(signing.code).toBe(0);
    expect(JSON.parse(signing.out).kid).toBeString();
  }, 60_000);

  it('rotates the identity-token key with keys rotate --tokens, and refuses it with --org', () => {
    const first = cli('keys', 'rotate', '--tokens');
    expect(first.code).toBe(0);
    const second = JSON.parse(cli('keys', 'rotate', '--tokens').out);
    expect(second.token_keys).toBe(true);
    expect(second.kid).not.toBe(JSON.parse(first.out).kid);
    const both = cli('keys', 'rotate', '--tokens', '--org', crypto.randomUUID());
    expect(both.code).toBe(2);
    expect(both.err).toContain('--tokens and --org');
  }, 60_000);

  it('creates an OAuth 2.0 client and prints its ID and secret, flags named in refusals', () => {
    const { organization_id } = JSON.parse(cli('org', 'create', '--name', 'Clients').out);
    const made = cli(
      'oauth-client',
      'create',
      '--org',
      organization_id,
      '--name',
      'Billing',
      '--scopes',
      'read,write',
    );
    expect(made.code).toBe(0);
    expect(JSON.parse(made.out)).toEqual({
      organization_id,
      client_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      client_secret: expect.stringMatching(/^ocs_/),
      client_name: 'Billing',
      grant_types: ['client_credentials'],
      scopes: ['read', 'write'],
      redirect_uris: [],
      public: false,
      post_logout_redirect_uris: [],
      backchannel_logout_session_required: false,
      first_party: true,
      token_endpoint_auth_method: 'client_secret_basic',
    });
    const spa = cli(
      'oauth-client',
      'create',
      '--org',
      organization_id,
      '--name',
      'SPA',
      '--public',
      '--redirect-uri',
      'https://app.example/cb',
      '--redirect-uri',
      'http://127.0.0.1:8080/cb',
      '--post-logout-redirect-uri',
      'https://app.example/bye',
      '--backchannel-logout-uri',
      'https://app.example/logout',
      '--backchannel-logout-session-required',
      '--third-party',
    );
    expect(spa.code).toBe(0);
    expect(JSON.parse(spa.out)).toMatchObject({
      grant_types: ['authorization_code'],
      redirect_uris: ['https://app.example/cb', 'http://127.0.0.1:8080/cb'],
      public: true,
      post_logout_redirect_uris: ['https://app.example/bye'],
      backchannel_logout_uri: 'https://app.example/logout',
      backchannel_logout_session_required: true,
      first_party: false,
    });
    expect(JSON.parse(spa.out).client_secret).toBeUndefined();
    const wrong = cli(
      'oauth-client',
      'create',
      '--org',
      organization_id,
      '--name',
      'x',
      '--public',
      '--redirect-uri',
      'http://app.example/cb',
    );
    expect(wrong.code).toBe(2);
    expect(wrong.err).toContain('--redirect-uri[0]: must use https');
    const fragment = cli(
      'oauth-client',
      'create',
      '--org',
      organization_id,
      '--name',
      'x',
      '--backchannel-logout-uri',
      'https://app.example/logout#x',
    );
    expect(fragment.code).toBe(2);
    expect(fragment.err).toContain('--backchannel-logout-uri: must not contain a fragment');
    const keyed = cli(
      'oauth-client',
      'create',
      '--org',
      organization_id,
      '--name',
      'Agent',
      '--token-endpoint-auth-method',
      'private_key_jwt',
      '--jwks-uri',
      'https://agent.example/jwks.json',
    );
    expect(keyed.code).toBe(0);
    expect(JSON.parse(keyed.out)).toMatchObject({
      public: false,
      token_endpoint_auth_method: 'private_key_jwt',
      jwks_uri: 'https://agent.example/jwks.json',
    });
    expect(JSON.parse(keyed.out).client_secret).toBeUndefined();
    const keyless = cli(
      'oauth-client',
      'create',
      '--org',
      organization_id,
      '--name',
      'x',
      '--token-endpoint-auth-method',
      'private_key_jwt',
    );
    expect(keyless.code).toBe(2);
    expect(keyless.err).toContain('--jwks-uri: a private_key_jwt client needs its public keys');
  }, 60_000);

  it('reseals stored secrets with the current master key and reports the counts', () => {
    const r = cli('secrets', 'reseal');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.out);
    expect(out.current_key_id).toBe('test');
    // Everything here was sealed with the one key there is: nothing to do, every column visited.
    expect(out.resealed).toEqual({
      'signing_keys.private_sealed': 0,
      'attributes.value': 0,
      'webhooks.custom_headers': 0,
      'sso_credentials.client_secret': 0,
      'sso_credentials.secret_options': 0,
      'oauth2_authorize_codes.id_token': 0,
      'oauth2_authorize_devices.id_token': 0,
      'oauth2_clients.secret_sealed': 0,
      'totp_credentials.secret': 0,
    });
  }, 60_000);

  it('says what is wrong with a command, without a stack trace', () => {
    const missing = cli('org', 'create');
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('--name <name> is required');
    const unknown = cli('frobnicate');
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('unknown command: frobnicate');
    // Refused before any database is opened: a fresh DATA_DIR stays empty.
    const untouched = mkdtempSync(join(tmpdir(), 'ids-cli-typo-'));
    const typo = Bun.spawnSync([process.execPath, join(ROOT, 'scripts/cli.ts'), 'org', 'craete'], {
      env: { ...process.env, DATA_DIR: untouched, MASTER_KEY: '', DATABASE_URL: '', NATS_URL: '' },
    });
    expect(typo.exitCode).toBe(2);
    expect(readdirSync(untouched)).toEqual([]);
    rmSync(untouched, { recursive: true });
    const badOrg = cli('keys', 'rotate', '--org', 'acme');
    expect(badOrg.code).toBe(2);
    expect(badOrg.err).toContain('--org must be an organization ID');
    const emptyGrace = cli('org', 'api-key', 'rotate', '--org', crypto.randomUUID(), '--grace=');
    expect(emptyGrace.code).toBe(2);
    expect(emptyGrace.err).toContain('--grace must be whole seconds');
    for (const r of [missing, unknown, badOrg, emptyGrace]) expect(r.err).not.toContain('    at ');
  }, 60_000);

  it('refuses clearly while a server holds the embedded database, and leaves it intact', () => {
    const lock = acquireDataDirLock(dir, { purpose: 'server', port: 4321 });
    try {
      const r = cli('org', 'list');
      expect(r.code).toBe(3);
      expect(r.err).toContain('is in use by another process');
      expect(r.err).toContain('Stop the server');
      expect(r.err).not.toContain('    at ');
    } finally {
      lock.release();
    }
    const after = cli('org', 'list');
    expect(after.code).toBe(0);
    expect(JSON.parse(after.out).length).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it('generates the master key on a first start without MASTER_KEY, and refuses to run on once it is lost', () => {
    const fresh = mkdtempSync(join(tmpdir(), 'ids-cli-key-'));
    const run = () =>
      Bun.spawnSync([process.execPath, join(ROOT, 'scripts/cli.ts'), 'org', 'create', '--name', 'K'], {
        env: {
          ...process.env,
          DATA_DIR: fresh,
          MASTER_KEY: '',
          DATABASE_URL: '',
          NATS_URL: '',
          LOG_LEVEL: 'error',
        },
      });
    try {
      const first = run();
      expect(first.exitCode).toBe(0);
      expect(existsSync(join(fresh, 'master.key'))).toBe(true);
      expect(run().exitCode).toBe(0);
      rmSync(join(fresh, 'master.key'));
      const lost = run();
      expect(lost.exitCode).not.toBe(0);
      expect(lost.stderr.toString()).toContain('restore master.key into DATA_DIR or set MASTER_KEY');
      expect(lost.stderr.toString()).not.toContain('    at ');
      expect(existsSync(join(fresh, 'master.key'))).toBe(false);
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  }, 90_000);
});

describe('the admin CLI logs', () => {
  /** `org create` on a fresh data directory, where it warns that it generated the master key. */
  const firstRun = (logLevel: string | undefined) => {
    const fresh = mkdtempSync(join(tmpdir(), 'ids-cli-log-'));
    try {
      const env: Record<string, string | undefined> = {
        ...process.env,
        DATA_DIR: fresh,
        MASTER_KEY: '',
        DATABASE_URL: '',
        NATS_URL: '',
        LOG_LEVEL: logLevel,
      };
      if (logLevel === undefined) delete env.LOG_LEVEL;
      const r = Bun.spawnSync(
        [process.execPath, join(ROOT, 'scripts/cli.ts'), 'org', 'create', '--name', 'L'],
        {
          env,
        },
      );
      expect(r.exitCode).toBe(0);
      return r.stderr.toString();
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  };

  it('warnings on standard error by default and at LOG_LEVEL=info, nothing at error or silent', () => {
    for (const level of [undefined, 'info']) {
      const err = firstRun(level);
      expect(err).toContain('"level":"warn"');
      expect(err).toContain('generated one into DATA_DIR/master.key');
      expect(err).not.toContain('"level":"info"');
    }
    for (const level of ['error', 'silent']) expect(firstRun(level)).toBe('');
  }, 90_000);
});

describe('the identity-service bin', () => {
  const asUser = (command: string[]) => {
    const r = Bun.spawnSync(command, {
      cwd: ROOT,
      env: {
        ...process.env,
        DATA_DIR: dir,
        MASTER_KEY: TEST_MASTER_KEY,
        DATABASE_URL: '',
        NATS_URL: '',
        LOG_LEVEL: 'info',
      },
    });
    return { code: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() };
  };
  /** Standard output is one JSON document and nothing else: no npm header, no log line. */
  const oneJsonDocument = (out: string) => {
    expect(out.trimStart().startsWith('{')).toBe(true);
    return JSON.parse(out);
  };

  it.each([
    ['npx identity-service', ['npx', '--no-install', 'identity-service']],
    ['npm run -s cli --', ['npm', 'run', '-s', 'cli', '--']],
    ['node scripts/cli-bin.mjs', ['node', 'scripts/cli-bin.mjs']],
  ])(
    '%s org create prints exactly one JSON document on standard output',
    (_, prefix) => {
      const r = asUser([...prefix, 'org', 'create', '--name', 'Npx']);
      expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: expect.any(String) });
      const out = oneJsonDocument(r.out);
      expect(Object.keys(out).sort()).toEqual(['api_key', 'organization_id']);
    },
    60_000,
  );

  it('passes the exit code through: a usage error is 2, on standard error', () => {
    const r = asUser(['node', 'scripts/cli-bin.mjs', 'org', 'create']);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toContain('--name <name> is required');
  }, 60_000);
});
