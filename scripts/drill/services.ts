/**
 * Private NATS and Postgres servers for the drills that restart them mid-burst: each on a port of its
 * own with its own data, so a restart disturbs nothing else on the machine. The port lies below the
 * ephemeral range, so no connection can take it while the server is down (see freeRestartablePort).
 * NATS is the nats-server binary (NATS_SERVER_BIN, default /usr/sbin/nats-server); Postgres is a fresh
 * cluster made with initdb (PG_BIN, default the newest /usr/lib/postgresql/<version>/bin), run as the
 * `postgres` user when the drill runs as root (initdb refuses root).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeRestartablePort } from '../free-port.ts';

export interface RestartableService {
  url: string;
  /** Stops the server (SIGTERM, then SIGKILL after 10 s) and starts it again on the same port and data. */
  restart(downMs?: number): Promise<void>;
  /** The last lines of the server's log. */
  logTail(): string;
  stop(): Promise<void>;
}

async function waitPort(port: number, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const s = Bun.connect({
        hostname: '127.0.0.1',
        port,
        socket: {
          open: (sock) => {
            sock.end();
            resolve(true);
          },
          error: () => resolve(false),
          data() {},
        },
      }).catch(() => resolve(false));
      void s;
    });
    if (open) return;
    if (Date.now() > end) throw new Error(`${what} did not listen on ${port} within ${ms} ms`);
    await Bun.sleep(50);
  }
}

export async function privateNats(): Promise<RestartableService> {
  const bin = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';
  if (!existsSync(bin)) throw new Error(`no nats-server at ${bin} (set NATS_SERVER_BIN)`);
  const port = await freeRestartablePort();
  const dir = mkdtempSync(join(tmpdir(), 'drill-nats-'));
  const logFile = join(dir, 'nats.log');
  const start = () => {
    const p = Bun.spawn([bin, '-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir, '-l', logFile], {
      stdout: 'ignore',
      stderr: 'ignore',
    });
    // A server that dies on its own is news for the drill's operator: say so with its last lines.
    void p.exited.then((code) => {
      if (p === proc && !stopping) console.error(`nats-server exited by itself (${code}):\n${tail(logFile)}`);
    });
    return p;
  };
  let stopping = false;
  let proc = start();
  await waitPort(port, 20_000, 'nats-server');
  const stopProc = async () => {
    stopping = true;
    // This server, not whatever `proc` names by the time the timer fires: a timer left running once
    // killed the server started again after it, ten seconds into the restart drill.
    const running = proc;
    running.kill('SIGTERM');
    const timer = setTimeout(() => running.kill('SIGKILL'), 10_000);
    await running.exited;
    clearTimeout(timer);
  };
  return {
    url: `nats://127.0.0.1:${port}`,
    async restart(downMs = 2000) {
      await stopProc();
      await Bun.sleep(downMs);
      stopping = false;
      proc = start();
      await waitPort(port, 20_000, 'nats-server');
    },
    logTail: () => tail(logFile),
    async stop() {
      await stopProc();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The last lines of a log file, or a note that there is none. */
function tail(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return `(no log at ${file})`;
  }
}

function pgBin(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  if (!versions.length) throw new Error('no Postgres binaries under /usr/lib/postgresql (set PG_BIN)');
  return join(root, versions[0]!, 'bin');
}

export async function privatePostgres(): Promise<RestartableService> {
  const bin = pgBin();
  const port = await freeRestartablePort();
  const dir = mkdtempSync(join(tmpdir(), 'drill-pg-'));
  const asRoot = process.getuid?.() === 0;
  const log = join(dir, 'log');
  // Not spawnSync: this process's own clients of the server (the drill's) must go on while pg_ctl
  // waits. One that connected as the server began to stop, its startup message never sent while the
  // event loop was blocked, held the stop for the server's authentication_timeout (60 s), beyond the
  // 60 s pg_ctl waits: the drill failed with "server does not shut down".
  const run = async (args: string[]) => {
    const cmd = asRoot ? ['runuser', '-u', 'postgres', '--', ...args] : args;
    const p = Bun.spawn(cmd, { stdout: 'ignore', stderr: 'pipe' });
    const [code, stderr] = await Promise.all([p.exited, new Response(p.stderr).text()]);
    if (code !== 0)
      throw new Error(`${args.join(' ')} failed: ${stderr}\nthe server's log ends:\n${tail(log)}`);
  };
  if (asRoot) Bun.spawnSync(['chown', 'postgres', dir]);
  const data = join(dir, 'data');
  await run([join(bin, 'initdb'), '-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const ctl = (action: string) =>
    run([
      join(bin, 'pg_ctl'),
      '-D',
      data,
      '-l',
      log,
      '-w',
      '-m',
      'fast',
      '-o',
      // A client elsewhere that connects while the server stops and says nothing holds the stop no
      // longer than this.
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c authentication_timeout=10s`,
      action,
    ]);
  await ctl('start');
  await waitPort(port, 30_000, 'postgres');
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async restart(downMs = 2000) {
      await ctl('stop');
      await Bun.sleep(downMs);
      await ctl('start');
      await waitPort(port, 30_000, 'postgres');
    },
    logTail: () => tail(log),
    async stop() {
      try {
        // A server a failed restart left down is stopped already; a second error would hide the first.
        if (existsSync(join(data, 'postmaster.pid'))) await ctl('stop');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
