import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';

/** Deletes the JetStream streams whose names start with `prefix`: what a run of a bench or drill made. */
export async function deleteStreams(natsUrl: string, prefix: string) {
  const nc = await connect({ servers: natsUrl });
  try {
    const jsm = await jetstreamManager(nc);
    const names: string[] = [];
    for await (const name of jsm.streams.names()) if (name.startsWith(prefix)) names.push(name);
    for (const name of names) await jsm.streams.delete(name);
  } finally {
    await nc.close();
  }
}
