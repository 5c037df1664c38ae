import type { Clock } from '../../../core/ports/clock.ts';
import type { SecretBox } from '../../../core/ports/secret-box.ts';

/** A nonce is good in the window it was made in and the next: 5 to 10 minutes. */
const WINDOW_MS = 5 * 60_000;
const CONTEXT = 'oauth2:dpop-nonce';

/**
 * Server nonces for DPoP proofs (RFC 9449 §8), that every replica makes and checks without sharing
 * state: a nonce is the number of a 5-minute window sealed by the SecretBox (AES-GCM under the master
 * key: authenticated, so none can be forged, and any replica opens another's). One is made per window
 * and replica, so it rotates by itself; the previous window's is still taken, so a client that just
 * received one is not refused at a window's edge.
 */
export function createNonces(deps: { secrets: SecretBox; clock: Clock }) {
  const { secrets, clock } = deps;
  let made: { window: number; nonce: Promise<string> } | undefined;
  const windowOf = (ms: number) => Math.floor(ms / WINDOW_MS);

  return {
    /** The nonce to hand out now (the DPoP-Nonce header). */
    current(): Promise<string> {
      const window = windowOf(clock.now());
      if (made?.window !== window) made = { window, nonce: secrets.seal(String(window), CONTEXT) };
      return made.nonce;
    },

    /** Whether a proof's nonce is one of this window's or the previous one's. */
    async valid(nonce: string | undefined): Promise<boolean> {
      if (nonce === undefined || nonce.length > 512) return false;
      let window: number;
      try {
        window = Number(await secrets.open(nonce, CONTEXT));
      } catch {
        return false;
      }
      const now = windowOf(clock.now());
      return window === now || window === now - 1;
    },
  };
}

export type Nonces = ReturnType<typeof createNonces>;
