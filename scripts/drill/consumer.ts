/**
 * The consuming process of the crash drill: handles messages of DRILL_TOPIC by appending their id to
 * DRILL_OUT before acknowledging them, slowly enough to be killed mid-stream.
 */
import { appendFileSync } from 'node:fs';
import { ack } from '../../core/ports/event-bus.ts';
import { busFromEnv } from './bus-from-env.ts';

const { bus } = await busFromEnv(process.env);
const out = process.env.DRILL_OUT!;
const delayMs = Number(process.env.DRILL_HANDLER_MS ?? '1');
bus.consume(
  process.env.DRILL_TOPIC ?? 'drill',
  async (m) => {
    await new Promise((r) => setTimeout(r, delayMs));
    appendFileSync(out, `${m.id}\n`);
    return ack();
  },
  { concurrency: 16, leaseMs: 2000 },
);
console.log('consuming');
