/**
 * Test events published over HTTP, as the deliveries section sends them to the real server: an
 * organization made with the CLI, its webhooks, and POST /test-events in bursts or paced.
 */
import { join } from 'node:path';
import { ROOT } from './processes.ts';

export const EVENT = 'PersonIdentified_v1';
/** Events per POST /test-events in a burst (the most one entry's `count` may ask for). */
export const PER_REQUEST = 50;
const now = () => performance.timeOrigin + performance.now();

/** An event the bench published: its id and when its request was sent. */
export interface Sent {
  id: string;
  t: number;
}

export interface Credentials {
  organization_id: string;
  api_key: string;
}

/** An organization made with the CLI: it outlives the servers, in the database they share. */
export function organization(env: Record<string, string>, name: string): Credentials {
  const cli = Bun.spawnSync(
    [process.execPath, join(ROOT, 'scripts/cli.ts'), 'org', 'create', '--name', name],
    {
      cwd: ROOT,
      env: { ...process.env, ...env },
    },
  );
  if (cli.exitCode !== 0) throw new Error(`org create failed: ${cli.stderr.toString()}`);
  return JSON.parse(cli.stdout.toString());
}

/** The organization's API on the servers at `base`: webhooks made, test events published. */
export function orgApi(base: string, org: Credentials) {
  const headers = {
    'Service-OrgID': org.organization_id,
    'Service-API-Key': org.api_key,
    'content-type': 'application/json',
  };
  const post = async (path: string, body: unknown, status: number) => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    const text = await res.text();
    if (res.status !== status) throw new Error(`POST ${path} answered ${res.status} ${text}`);
    return JSON.parse(text);
  };
  return {
    /** `n` webhooks on EVENT, to the receivers on `port`. */
    async webhooks(n: number, port: number) {
      for (let i = 0; i < n; i++) {
        const target = `https://hooks.test:${port}/d${org.organization_id.slice(-6)}/h${i}`;
        const made = await post('/organizations/webhooks', { name: `bench ${i}`, target_url: target }, 201);
        await post(
          `/organizations/webhooks/${made.result.id}/triggers`,
          { trigger_type: 'event', trigger_name: EVENT },
          201,
        );
      }
    },
    /** `count` events in one request, each stamped with the time the request was sent. */
    async publish(count: number): Promise<Sent[]> {
      const t = now();
      const result: Array<{ event_id: string }> = (
        await post('/test-events', [{ event_name: EVENT, count }], 201)
      ).result;
      return result.map((e) => ({ id: e.event_id, t }));
    },
  };
}

export type Org = ReturnType<typeof orgApi>;

/** `events` published PER_REQUEST a request, `inflight` requests at a time. */
export async function burst(org: Org, events: number, inflight: number): Promise<Sent[]> {
  const sent: Sent[] = [];
  let left = events;
  await Promise.all(
    Array.from({ length: Math.min(inflight, Math.ceil(events / PER_REQUEST)) }, async () => {
      while (left > 0) {
        const count = Math.min(PER_REQUEST, left);
        left -= count;
        sent.push(...(await org.publish(count)));
      }
    }),
  );
  return sent;
}

/**
 * `perSecond` events for `seconds`, spread evenly: requests at most every 5 ms, each carrying the events
 * due since the last one, sent without waiting for the previous answer.
 */
export async function paced(org: Org, perSecond: number, seconds: number): Promise<Sent[]> {
  const perRequest = Math.max(1, Math.ceil(perSecond / 200));
  const requests = Math.max(5, Math.round((perSecond * seconds) / perRequest));
  const sent: Sent[] = [];
  const answers: Promise<unknown>[] = [];
  const start = performance.now();
  for (let i = 0; i < requests; i++) {
    const wait = start + (i * perRequest * 1000) / perSecond - performance.now();
    if (wait > 1) await Bun.sleep(wait);
    answers.push(org.publish(perRequest).then((s) => sent.push(...s)));
  }
  await Promise.all(answers);
  return sent;
}
