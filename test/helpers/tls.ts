import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createServer, type TLSSocket } from 'node:tls';

/** A test certificate authority and a server certificate it signed for `hooks.test` and `*.hooks.test`. */
export interface TestTls {
  caPem: string;
  certPem: string;
  keyPem: string;
  /** Where the PEM files live: ca.pem, server.pem, server.key. */
  dir: string;
}

const CACHE_ROOT = join(import.meta.dir, '..', '..', '.cache');
const FILES = ['ca.pem', 'server.pem', 'server.key'] as const;
let cached: TestTls | undefined;

/**
 * The test CA, generated with the openssl CLI on first use and kept in .cache/test-tls/ so later runs
 * reuse it. The certificate names only hooks.test and *.hooks.test (no IP), so a client that connects to
 * 127.0.0.1 verifies only if it checks the hostname it was given.
 */
export function testTls(): TestTls {
  cached ??= cachedTestCa({
    cache: 'test-tls',
    caName: 'identity-service test CA',
    serverName: 'hooks.test',
    subjectAltName: 'DNS:hooks.test,DNS:*.hooks.test',
  });
  return cached;
}

/** What a cached test authority and its one server certificate are made for. */
export interface TestCaSpec {
  /** The folder under .cache/. */
  cache: string;
  /** The CA's common name. */
  caName: string;
  /** The server certificate's common name. */
  serverName: string;
  /** Its subjectAltName, such as `DNS:hooks.test` or `IP:127.0.0.1`. */
  subjectAltName: string;
}

/**
 * A CA and a server certificate it signed, made with the openssl CLI on first use (or within 30 days of
 * expiry) and kept in .cache/<cache>/ for later runs.
 */
export function cachedTestCa(spec: TestCaSpec): TestTls {
  const dir = join(CACHE_ROOT, spec.cache);
  if (!FILES.every((f) => existsSync(join(dir, f))) || expiresSoon(join(dir, 'server.pem')))
    generate(dir, spec);
  const read = (f: string) => readFileSync(join(dir, f), 'utf8');
  return { caPem: read('ca.pem'), certPem: read('server.pem'), keyPem: read('server.key'), dir };
}

function expiresSoon(certPath: string): boolean {
  try {
    execFileSync('openssl', ['x509', '-checkend', String(30 * 86400), '-noout', '-in', certPath]);
    return false;
  } catch {
    return true;
  }
}

// Generated in a scratch directory and renamed into place, so two test processes never see half a CA.
function generate(dir: string, spec: TestCaSpec): void {
  mkdirSync(CACHE_ROOT, { recursive: true });
  const tmp = mkdtempSync(join(CACHE_ROOT, `${spec.cache}-`));
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: tmp, stdio: 'pipe' });
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  ssl(
    'req',
    '-x509',
    ...ecKey,
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '825',
    '-subj',
    `/CN=${spec.caName}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  ssl('req', ...ecKey, '-keyout', 'server.key', '-out', 'server.csr', '-subj', `/CN=${spec.serverName}`);
  writeFileSync(
    join(tmp, 'server.ext'),
    `subjectAltName=${spec.subjectAltName}\nbasicConstraints=CA:FALSE\n` +
      'keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n',
  );
  ssl(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.pem',
    '-days',
    '825',
    '-extfile',
    'server.ext',
  );
  rmSync(dir, { recursive: true, force: true });
  try {
    renameSync(tmp, dir);
  } catch {
    rmSync(tmp, { recursive: true, force: true }); // another process won the race; use its files
  }
}

/** The test OpenID provider's host name (test/helpers/oidc-op.ts): the test certificate covers it. */
export const OP_HOST = 'op.hooks.test';
/** A name for a test's own stand-in provider over HTTPS (startHttpsReceiver or node:https, testTls). */
export const IDP_HOST = 'idp.hooks.test';

/**
 * The settings that let a test service reach the test OpenID provider, and any HTTPS receiver on
 * *.hooks.test, as an SSO provider: the name mapped to loopback, loopback allowed to SSO requests, the
 * test CA trusted. `hostMap` adds the map pairs of the caller's own DELIVERY_HOST_MAP.
 */
export function testOutboundEnv(hostMap?: string): Record<string, string> {
  return {
    SSO_ALLOW_PRIVATE: '127.0.0.0/8',
    DELIVERY_HOST_MAP: [`${OP_HOST}=127.0.0.1`, `${IDP_HOST}=127.0.0.1`, ...(hostMap ? [hostMap] : [])].join(
      ',',
    ),
    NODE_EXTRA_CA_CERTS: join(testTls().dir, 'ca.pem'),
  };
}

/**
 * `fetch` as a developer's machine with hosts entries for hooks.test and *.hooks.test (127.0.0.1) and the
 * test CA installed: a browser's side of a test (the service's own requests go through its guard).
 */
export function fetchTestHost(url: string | URL, init: RequestInit = {}): Promise<Response> {
  const target = new URL(url);
  const name = target.hostname;
  if (name !== 'hooks.test' && !name.endsWith('.hooks.test')) return fetch(target, init);
  const headers = new Headers(init.headers);
  headers.set('host', target.host);
  target.hostname = '127.0.0.1';
  return fetch(target, { ...init, headers, tls: { ca: testTls().caPem, serverName: name } });
}

/** A request as the receiver saw it. */
export interface ReceivedRequest {
  method: string;
  /** Path and query. */
  path: string;
  headers: Headers;
  body: string;
}

/** A running HTTPS receiver on 127.0.0.1 with the test certificate. */
export interface HttpsReceiver {
  port: number;
  /** `https://hooks.test:<port><path>`: pair it with hostMap { 'hooks.test': '127.0.0.1' }. */
  url(path?: string, host?: string): string;
  /** Every request received, in order of arrival. */
  requests: ReceivedRequest[];
  stop(): Promise<void>;
}

/**
 * Starts a Bun.serve HTTPS receiver that records each request and answers with `handler`.
 *
 * @example
 * const receiver = startHttpsReceiver(() => new Response('ok'));
 * await delivery.post({ url: receiver.url('/hook'), ... });
 * expect(receiver.requests[0]?.headers.get('content-type')).toBe('application/jwt');
 */
export function startHttpsReceiver(
  handler: (request: Request, received: ReceivedRequest) => Response | Promise<Response>,
): HttpsReceiver {
  const { certPem, keyPem } = testTls();
  const requests: ReceivedRequest[] = [];
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    tls: { cert: certPem, key: keyPem },
    async fetch(request) {
      const url = new URL(request.url);
      const received: ReceivedRequest = {
        method: request.method,
        path: `${url.pathname}${url.search}`,
        headers: request.headers,
        body: await request.clone().text(),
      };
      requests.push(received);
      return handler(request, received);
    },
  });
  const port = server.port!;
  return {
    port,
    url: (path = '/', host = 'hooks.test') => `https://${host}:${port}${path}`,
    requests,
    stop: () => server.stop(true),
  };
}

/** A bare TLS listener for what Bun.serve cannot show or send: the client's SNI, raw status lines. */
export interface RawTlsReceiver {
  port: number;
  /** The SNI each connection presented (false when none). */
  serverNames: Array<string | false>;
  stop(): Promise<void>;
}

/** Answers every request on a connection with the raw HTTP text `respond` returns, then closes it. */
export async function startRawTlsReceiver(respond: (rawRequest: string) => string): Promise<RawTlsReceiver> {
  const { certPem, keyPem } = testTls();
  const serverNames: Array<string | false> = [];
  const server = createServer({ cert: certPem, key: keyPem }, (socket: TLSSocket) => {
    serverNames.push(socket.servername ?? false);
    socket.on('error', () => {});
    socket.once('data', (data) => socket.end(respond(data.toString('latin1'))));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    serverNames,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
