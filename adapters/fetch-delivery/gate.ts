/** Lets a request go once a slot is free; `enter` resolves to the function that gives the slot back. */
export interface Gate {
  enter(signal: AbortSignal): Promise<() => void>;
}

/**
 * Admits at most `limit` young requests at once; a request stops counting once it is `youngMs` old.
 *
 * Why: Bun keeps at most 64 idle TLS connections for all of fetch. When more requests than that finish
 * together, the surplus connections are closed, and the next requests pay a new TCP and TLS handshake
 * each (measured on Bun 1.4.5, 1 KiB POSTs on loopback: 64 in flight reuse every connection at 47k/s;
 * 80 in flight open 900 connections a second; 256 in flight open 1,700 a second and fall to 18k/s).
 * Fast requests therefore wait for a slot. A slow request (a receiver that takes its time) gives its slot
 * up after `youngMs`, so slow receivers cannot hold the others back: their connections are reused rarely
 * anyway, and a handshake per slow request is a small cost next to its wait. Too short a `youngMs` turns
 * a receiver slowed by load into more connections to it, and slower still: the cost is that while every
 * receiver is slow, `limit` requests start per `youngMs` (128 a second for 64 and 500 ms).
 */
export function createGate(limit: number, youngMs: number): Gate {
  let active = 0;
  const waiting = new Set<() => void>();

  // Hands the slot to the next waiter, if any (it keeps counting), or frees it.
  const release = () => {
    const next = waiting.values().next();
    if (next.done) active--;
    else {
      waiting.delete(next.value);
      next.value();
    }
  };

  function hold(): () => void {
    let held = true;
    const done = () => {
      if (!held) return;
      held = false;
      clearTimeout(timer);
      release();
    };
    const timer = setTimeout(done, youngMs);
    return done;
  }

  return {
    enter(signal) {
      if (active < limit) {
        active++;
        return Promise.resolve(hold());
      }
      return new Promise((resolve, reject) => {
        const admit = () => {
          signal.removeEventListener('abort', abort);
          resolve(hold());
        };
        const abort = () => {
          waiting.delete(admit);
          reject(signal.reason);
        };
        if (signal.aborted) return reject(signal.reason);
        signal.addEventListener('abort', abort, { once: true });
        waiting.add(admit);
      });
    },
  };
}
