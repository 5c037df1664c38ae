import { afterAll, describe, expect, it } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireDataDirLock, DataDirLockedError } from '../../adapters/pglite/lock.ts';
import { tellsProcessesApart } from '../../adapters/pglite/process-life.ts';
import { freePort } from '../../scripts/free-port.ts';
import { expectStatus } from '../helpers/expect-status.ts';
import { TEST_MASTER_KEY } from '../helpers/service.ts';

const ROOT = join(import.meta.dir, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'ids-kill-'));
const cleanups: Array<() => void> = [];
afterAll(() => {
  for (const c of cleanups) c();
  rmSync(dir, { recursive: true, force: true });
});

const env = (port: number) => ({
  ...process.env,
  DATA_DIR: dir,
  PORT: String(port),
  HOST: '127.0.0.1',
  MASTER_KEY: TEST_MASTER_KEY,
  DATABASE_URL: '',
  NATS_URL: '',
  NODE_ENV: 'development',
  LOG_LEVEL: 'warn',
});

/** Polls /healthz until the server answers, or its process ends (then its stderr says why). */
async function ready(port: number, exited: () => boolean, stderr: () => Promise<string>) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (exited()) throw new Error(`the server exited: ${await stderr()}`);
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await Bun.sleep(100);
  }
  throw new Error('the server did not answer /healthz within 60 s');
}

const procState = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return 'gone';
  }
};

describe('the data directory lock after kill -9', () => {
  it.skipIf(process.platform === 'win32')(
    'lets a server restart at once on the same DATA_DIR, though the killed one is not reaped, and keeps its data',
    async () => {
      const org = Bun.spawnSync([process.execPath, 'scripts/cli.ts', 'org', 'create', '--name', 'Kill'], {
        cwd: ROOT,
        env: env(0),
      });
      expect(org.exitCode).toBe(0);
      const { organization_id, api_key } = JSON.parse(org.stdout.toString());
      const headers = {
        'Service-OrgID': organization_id,
        'Service-API-Key': api_key,
        'content-type': 'application/json',
      };
      const attributes = (port: number) =>
        `http://127.0.0.1:${port}/organizations/attributes/end_user_read_write`;

      // The first server's parent is `sleep`, which never reaps it: killed, it stays a zombie, which
      // signal 0 still reaches (as under a container init that does not reap).
      const port1 = await freePort();
      const first = Bun.spawn(['sh', '-c', '"$0" entry/bun.ts & echo $!; exec sleep 300', process.execPath], {
        cwd: ROOT,
        env: env(port1),
        stdout: 'pipe',
        stderr: 'pipe',
      });
      cleanups.push(() => first.kill('SIGKILL'));
      const reader = first.stdout.getReader();
      const pid = Number(new TextDecoder().decode((await reader.read()).value).trim());
      expect(pid).toBeGreaterThan(0);
      await ready(
        port1,
        () => first.exitCode !== null,
        () => new Response(first.stderr).text(),
      );
      const put = await fetch(attributes(port1), {
        method: 'PUT',
        headers,
        body: JSON.stringify({ survives: 'kill -9' }),
      });
      await expectStatus(put, 204);

      process.kill(pid, 'SIGKILL');
      if (tellsProcessesApart) {
        const until = Date.now() + 5000;
        while (procState(pid) !== 'Z' && Date.now() < until) await Bun.sleep(5);
        expect(procState(pid)).toBe('Z');
      }

      const port2 = await freePort();
      const second = Bun.spawn([process.execPath, 'entry/bun.ts'], {
        cwd: ROOT,
        env: env(port2),
        stdout: 'ignore',
        stderr: 'pipe',
      });
      cleanups.push(() => second.kill('SIGKILL'));
      await ready(
        port2,
        () => second.exitCode !== null,
        () => new Response(second.stderr).text(),
      );
      const got = await fetch(attributes(port2), { headers });
      await expectStatus(got, 200);
      expect(await got.json()).toEqual({ result: { survives: 'kill -9' } });
      second.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    },
    120_000,
  );
});

describe('the data directory lock and recycled pids', () => {
  const lockDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'ids-lock-'));
    cleanups.push(() => rmSync(d, { recursive: true, force: true }));
    return d;
  };
  const startOf = (pid: number) => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  };
  const bootId = () => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();

  it.skipIf(!tellsProcessesApart)(
    'takes over a lock whose pid now belongs to a process started at another time, or in another boot',
    async () => {
      const other = Bun.spawn(['sleep', '30']);
      cleanups.push(() => other.kill('SIGKILL'));
      const holder = { pid: other.pid, purpose: 'server', started_at: '' };
      const cases = [
        { ...holder, start: '1', boot: bootId() },
        { ...holder, start: startOf(other.pid), boot: 'an-earlier-boot' },
      ];
      for (const recorded of cases) {
        const d = lockDir();
        writeFileSync(join(d, '.lock'), JSON.stringify(recorded));
        const lock = acquireDataDirLock(d, { purpose: 'test' });
        expect(JSON.parse(readFileSync(join(d, '.lock'), 'utf8')).pid).toBe(process.pid);
        lock.release();
      }
      // The same pid, start and boot: that process holds it.
      const d = lockDir();
      writeFileSync(
        join(d, '.lock'),
        JSON.stringify({ ...holder, start: startOf(other.pid), boot: bootId() }),
      );
      expect(() => acquireDataDirLock(d, { purpose: 'test' })).toThrow(DataDirLockedError);
    },
  );

  it('records its own pid, start time and boot, and a release leaves a lock taken over from it alone', () => {
    const d = lockDir();
    const lock = acquireDataDirLock(d, { purpose: 'test' });
    const mine = JSON.parse(readFileSync(join(d, '.lock'), 'utf8'));
    expect(mine.pid).toBe(process.pid);
    if (tellsProcessesApart) expect(mine).toMatchObject({ start: startOf(process.pid), boot: bootId() });
    writeFileSync(join(d, '.lock'), JSON.stringify({ ...mine, id: 'someone else' }));
    lock.release();
    expect(JSON.parse(readFileSync(join(d, '.lock'), 'utf8')).id).toBe('someone else');
  });
});
