import type { DPoPCheck } from '../../../core/capabilities/oauth2-server.ts';
import { urlPathOf } from '../../../core/http/request-target.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Nonces } from './nonce.ts';
import { type CheckedProof, checkProof, DPoPProofError, proofHeaderOf } from './proof.ts';
import type { ProofReplayStore } from './replay.ts';

/** Seconds a proof's iat may be from now, either way. */
export const PROOF_TOLERANCE_SECONDS = 60;

/**
 * The authorization server's DPoP proof check (RFC 9449 §4.3): the shared checks of proof.ts against
 * the URL this service is reached at (PUBLIC_BASE_URL and the request's path), then the server nonce
 * when nonces are on (§8), then the jti recorded once for every replica (§11.1).
 */
export function createDPoPChecker(deps: {
  replay: ProofReplayStore;
  nonces: Nonces | undefined;
  clock: Clock;
  publicBaseUrl: string;
}) {
  const { replay, nonces, clock } = deps;
  const base = deps.publicBaseUrl.replace(/\/+$/, '');

  /** The checked proof, undefined when the request has none; throws DPoPProofError. */
  async function check(
    request: Request,
    o: { accessToken?: string; jkt?: string } = {},
  ): Promise<CheckedProof | undefined> {
    const header = proofHeaderOf(request.headers);
    if (header === undefined) return undefined;
    const proof = await checkProof(header, {
      method: request.method,
      htu: `${base}${urlPathOf(request.url)}`,
      now: clock.now(),
      toleranceSeconds: PROOF_TOLERANCE_SECONDS,
      ...o,
    });
    if (nonces && !(await nonces.valid(proof.nonce)))
      throw new DPoPProofError(
        'use_dpop_nonce',
        proof.nonce === undefined
          ? "the DPoP proof must carry the server's nonce: the one in this answer's DPoP-Nonce header"
          : "the DPoP proof's nonce is not a current one: use the one in this answer's DPoP-Nonce header",
        { nonce: await nonces.current() },
      );
    const until = (Math.max(proof.iat, Math.floor(clock.now() / 1000)) + PROOF_TOLERANCE_SECONDS) * 1000;
    if (!(await replay.firstUse(proof.jkt, proof.jti, until)))
      throw new DPoPProofError('invalid_dpop_proof', 'the DPoP proof was used before (its jti is replayed)');
    return proof;
  }

  return {
    check,
    /** The nonce for a DPoP-Nonce header, when nonces are on. */
    nonce: (): Promise<string> | undefined => nonces?.current(),
    /** check() as the capability answers it. */
    async answer(request: Request, o?: { accessToken?: string; jkt?: string }): Promise<DPoPCheck> {
      try {
        const proof = await check(request, o);
        return proof ? { kind: 'valid', jkt: proof.jkt } : { kind: 'none' };
      } catch (e) {
        if (!(e instanceof DPoPProofError)) throw e;
        return {
          kind: 'refused',
          error: e.error,
          description: e.message,
          ...(e.nonce !== undefined ? { nonce: e.nonce } : {}),
        };
      }
    },
  };
}

export type DPoPChecker = ReturnType<typeof createDPoPChecker>;
