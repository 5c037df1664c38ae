import type { Clock } from '../../../core/ports/clock.ts';
import { normaliseRecoveryCode, recoveryDigest } from '../codes/recovery-codes.ts';
import { stepOf, TOTP_CODE } from '../codes/totp-codes.ts';
import type { TotpRow, TotpStore } from '../store/credentials.ts';
import type { SecretSealer } from '../store/sealing.ts';
import type { AttemptLimits } from './limits.ts';

/** What a code check answers: which kind of code signed the person in, or why not. */
export type CodeCheck =
  | { ok: true; kind: 'totp' | 'recovery_code'; credential: TotpRow }
  | { ok: false; reason: 'invalid' | 'not_enrolled'; detail: string }
  | { ok: false; reason: 'rate_limited'; detail: string; retryAfter: number };

/**
 * The second step's check of a person's code: a six-digit code of the confirmed authenticator, within
 * one step of drift and for a later step than the last accepted, or one of its unspent recovery codes.
 */
export function createCodeCheck(deps: {
  store: TotpStore;
  sealer: SecretSealer;
  clock: Clock;
  limits: AttemptLimits;
}) {
  const { store, sealer, clock, limits } = deps;

  async function checkTotp(credential: TotpRow, code: string): Promise<CodeCheck> {
    const secret = await sealer.open(credential.id, credential.secret);
    const step = stepOf(secret, code, clock.now());
    if (step === undefined)
      return {
        ok: false,
        reason: 'invalid',
        detail:
          "code: is not the authenticator's code for the current 30-second step (nor the one before or after)",
      };
    // The update checks the step again: of two requests racing with one code, one wins.
    if (!(await store.useStep(credential.id, step)))
      return { ok: false, reason: 'invalid', detail: 'code: was used already (each code signs in once)' };
    return { ok: true, kind: 'totp', credential };
  }

  async function checkRecoveryCode(credential: TotpRow, normal: string): Promise<CodeCheck> {
    const spent = await store.spendRecoveryCode(credential.id, await recoveryDigest(credential.id, normal));
    if (!spent)
      return {
        ok: false,
        reason: 'invalid',
        detail: 'code: is not a recovery code of this authenticator, or was spent already',
      };
    return { ok: true, kind: 'recovery_code', credential };
  }

  return async function check(
    orgId: string,
    personId: string,
    code: unknown,
    clientIp: string | undefined,
  ): Promise<CodeCheck> {
    if (typeof code !== 'string' || code.length > 64)
      return {
        ok: false,
        reason: 'invalid',
        detail: 'code: must be a string: the six-digit code of the authenticator app, or a recovery code',
      };
    const recovery = TOTP_CODE.test(code) ? undefined : normaliseRecoveryCode(code);
    if (!TOTP_CODE.test(code) && recovery === undefined)
      return {
        ok: false,
        reason: 'invalid',
        detail:
          'code: must be the six-digit code of the authenticator app, or a recovery code (16 letters and digits, dashes optional)',
      };
    const refused = await limits(orgId, personId, clientIp);
    if (refused) return { ok: false, reason: 'rate_limited', ...refused };
    const credential = await store.confirmedOf(orgId, personId);
    if (!credential)
      return { ok: false, reason: 'not_enrolled', detail: 'this person has no confirmed TOTP authenticator' };
    return recovery === undefined ? checkTotp(credential, code) : checkRecoveryCode(credential, recovery);
  };
}

export type CodeChecker = ReturnType<typeof createCodeCheck>;
