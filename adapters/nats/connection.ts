import { type JetStreamManager, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '../../core/log.ts';
import { BusError } from '../../core/ports/event-bus.ts';

export interface ConnectOptions {
  servers: string[];
  name: string;
  timeoutMs: number;
  log: Logger;
  /** The servers as they may be shown in messages. */
  where: string;
}

/**
 * Connects to NATS and checks that JetStream answers. A later loss of the connection is not fatal:
 * the client reconnects for ever, and publishes and pulls fail (and are retried) meanwhile.
 */
export async function openJetStream(
  o: ConnectOptions,
): Promise<{ nc: NatsConnection; jsm: JetStreamManager }> {
  let nc: NatsConnection;
  try {
    nc = await connect({
      servers: o.servers,
      name: o.name,
      timeout: o.timeoutMs,
      maxReconnectAttempts: -1,
      // Without it every request (each JetStream publish waits for its PubAck through one) makes two
      // Error objects up front, stack traces included, in case it fails: a tenth of the bus's CPU.
      noAsyncTraces: true,
    });
  } catch (cause) {
    throw new BusError('UNAVAILABLE', `cannot reach NATS at ${o.where}: ${(cause as Error).message}`, {
      cause,
    });
  }
  let jsm: JetStreamManager;
  try {
    jsm = await jetstreamManager(nc, { timeout: o.timeoutMs });
  } catch (cause) {
    await nc.close().catch(() => {});
    throw new BusError(
      'UNAVAILABLE',
      `JetStream is not available on NATS at ${o.where} (is the server started with -js?): ${(cause as Error).message}`,
      { cause },
    );
  }
  void watchStatus(nc, o.log, o.where);
  return { nc, jsm };
}

/** Logs losing and regaining the server until the connection closes. */
async function watchStatus(nc: NatsConnection, log: Logger, where: string): Promise<void> {
  for await (const s of nc.status()) {
    if (s.type === 'disconnect') log.warn('lost the connection to NATS; reconnecting', { server: s.server });
    else if (s.type === 'reconnect') log.info('reconnected to NATS', { server: s.server });
    else if (s.type === 'error') log.error('NATS reported an error', { err: s.error, servers: where });
  }
}

/** Server URLs as they may appear in a message: without passwords or tokens. */
export function redactServers(servers: readonly string[]): string {
  return servers.map((s) => s.replace(/\/\/[^@/]*@/, '//***@')).join(', ');
}
