import type { PersonDirectory } from '../../../core/capabilities/person-directory.ts';
import { uuidv7 } from '../../../core/ids.ts';
import type { OrganizationStore } from '../../../core/organizations/store.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage, Transaction } from '../../../core/ports/storage.ts';
import {
  newRecoveryCode,
  normaliseRecoveryCode,
  RECOVERY_CODE_COUNT,
  recoveryDigest,
} from '../codes/recovery-codes.ts';
import { newSecret, otpauthUri, qrSvg, stepOf } from '../codes/totp-codes.ts';
import { TotpErrors } from '../errors.ts';
import { lockPerson, type TotpRow, type TotpStore } from '../store/credentials.ts';
import type { SecretSealer } from '../store/sealing.ts';
import type { AttemptLimits } from '../verify/limits.ts';

/** What an enrolment answers, once: the secret is never shown again. */
export interface Enrolment {
  credential_id: string;
  secret: string;
  otpauth_uri: string;
  qr_svg: string;
  /** RFC 3339: confirm before then. */
  expires_at: string;
}

/** The enrolment of authenticators and their recovery codes, as the API routes call them. */
export function createEnrolment(deps: {
  storage: Storage;
  store: TotpStore;
  sealer: SecretSealer;
  directory: PersonDirectory;
  orgs: OrganizationStore;
  clock: Clock;
  limits: AttemptLimits;
  ttlMs: number;
}) {
  const { storage, store, sealer, directory, clock } = deps;

  async function mustExist(tx: Transaction, orgId: string, personId: string) {
    await lockPerson(tx, personId);
    const person = await directory.get(orgId, personId, { tx });
    if (!person) throw TotpErrors.PERSON_NOT_FOUND(personId);
    return person;
  }

  /** The person's authenticator of this ID, under the person's lock: 404 when there is none. */
  async function credentialIn(
    tx: Transaction,
    orgId: string,
    personId: string,
    id: string,
  ): Promise<TotpRow> {
    await mustExist(tx, orgId, personId);
    const row = await store.find(tx.db, orgId, personId, id);
    if (!row || (!row.confirmedAt && row.expiresAt && row.expiresAt.getTime() <= clock.now()))
      throw TotpErrors.TOTP_CREDENTIAL_NOT_FOUND(
        `no TOTP authenticator ${id} for person ${personId} (unknown, deleted, or an enrolment not confirmed within its time: start a new one)`,
      );
    return row;
  }

  /** Ten new recovery codes for the credential: the codes to show once, and the digests to store. */
  async function recoveryCodes(credentialId: string) {
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    const digests = await Promise.all(
      codes.map((code) => recoveryDigest(credentialId, normaliseRecoveryCode(code)!)),
    );
    return { codes, digests };
  }

  return {
    /**
     * Starts an enrolment: a new secret, sealed and stored as pending (replacing the person's earlier
     * pending one), shown once with its URI and QR code. The account is named by the person's first
     * handle, the issuer by the organization's name.
     */
    async enrol(orgId: string, personId: string, name: string | undefined): Promise<Enrolment> {
      const person = await directory.get(orgId, personId);
      if (!person) throw TotpErrors.PERSON_NOT_FOUND(personId);
      const handle = person.handles[0];
      if (!handle) throw TotpErrors.PERSON_WITHOUT_HANDLE(personId);
      const now = clock.now();
      const id = uuidv7(now);
      const secret = newSecret();
      const sealed = await sealer.seal(id, secret);
      const expiresAt = new Date(now + deps.ttlMs);
      await storage.transaction(async (tx) => {
        await mustExist(tx, orgId, personId);
        await store.addPending(tx, {
          id,
          orgId,
          personId,
          name: name ?? null,
          secret: sealed,
          createdAt: new Date(now),
          expiresAt,
        });
      });
      const issuer = (await deps.orgs.get(orgId))?.name ?? 'identity';
      const uri = otpauthUri({ secret, issuer, account: handle.value });
      return {
        credential_id: id,
        secret,
        otpauth_uri: uri,
        qr_svg: await qrSvg(uri),
        expires_at: expiresAt.toISOString(),
      };
    },

    /**
     * Confirms a pending enrolment with a code of the app: it then counts as the person's second factor,
     * replacing an earlier authenticator, and its recovery codes are answered (once).
     */
    async confirm(orgId: string, personId: string, id: string, code: string, clientIp: string | undefined) {
      const refused = await deps.limits(orgId, personId, clientIp);
      if (refused)
        throw TotpErrors.TOO_MANY_ATTEMPTS.with({ headers: { 'retry-after': String(refused.retryAfter) } })(
          `${refused.detail}; retry after ${refused.retryAfter} s`,
        );
      const { codes, digests } = await recoveryCodes(id);
      await storage.transaction(async (tx) => {
        const row = await credentialIn(tx, orgId, personId, id);
        if (row.confirmedAt)
          throw TotpErrors.TOTP_CREDENTIAL_STATE(`TOTP authenticator ${id} is confirmed already`);
        const step = stepOf(await sealer.open(row.id, row.secret), code, clock.now());
        if (step === undefined)
          throw TotpErrors.TOTP_CODE_REFUSED(
            "body.code: is not the authenticator's code for the current 30-second step (nor the one before or after): check the app's entry and the device's clock",
          );
        await store.confirm(tx, row, step, digests);
      });
      return { recovery_codes: codes };
    },

    /** New recovery codes for a confirmed authenticator: the earlier ones, spent or not, stop working. */
    async renewRecoveryCodes(orgId: string, personId: string, id: string) {
      const { codes, digests } = await recoveryCodes(id);
      await storage.transaction(async (tx) => {
        const row = await credentialIn(tx, orgId, personId, id);
        if (!row.confirmedAt)
          throw TotpErrors.TOTP_CREDENTIAL_STATE(
            `TOTP authenticator ${id} is not confirmed yet: its confirmation answers its recovery codes`,
          );
        await store.replaceRecoveryCodes(tx, id, digests);
      });
      return { recovery_codes: codes };
    },
  };
}

export type TotpEnrolment = ReturnType<typeof createEnrolment>;
