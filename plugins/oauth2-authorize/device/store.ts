import { and, eq, gt, lt } from 'drizzle-orm';
import type { Clock } from '../../../core/ports/clock.ts';
import type { SecretBox } from '../../../core/ports/secret-box.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import type { ApprovedDevice, DeviceCodes, PolledDevice } from '../../oauth2/grants/index.ts';
import { oauth2AuthorizeDevices } from '../schema.ts';
import { digest, scopeList, scopeText } from '../store/digest.ts';

const d = oauth2AuthorizeDevices;
type Row = typeof d.$inferSelect;

export const deviceSealContext = (deviceCodeHash: string) => `oauth2-authorize:device:${deviceCodeHash}`;

const STATUSES = ['pending', 'approved', 'denied', 'issued'] as const;
const statusOf = (s: string): PolledDevice['status'] => STATUSES.find((x) => x === s) ?? 'denied';

/** A device authorization as the page sees it. */
export interface DeviceRequest extends PolledDevice {
  browserHash: string | undefined;
  personId: string | undefined;
  sessionId: string | undefined;
}

const polledOf = (row: Row): DeviceRequest => ({
  deviceCodeHash: row.deviceCodeHash,
  orgId: row.orgId,
  clientId: row.clientId,
  scope: scopeList(row.scope),
  status: statusOf(row.status),
  interval: row.interval,
  lastPolledAt: row.lastPolledAt ?? undefined,
  expiresAt: row.expiresAt,
  browserHash: row.browserHash ?? undefined,
  personId: row.personId ?? undefined,
  sessionId: row.sessionId ?? undefined,
});

/**
 * Device authorizations (RFC 8628): made by the device authorization endpoint, found by the page by
 * user code, signed in and decided by the person, polled and spent by the device_code grant. The
 * user code's digest is unique: a collision (one in billions while both live) is drawn again by the
 * caller.
 */
export function createDeviceStore(deps: { storage: Storage; clock: Clock; secrets: SecretBox }) {
  const { storage, clock, secrets } = deps;
  const live = async (where: ReturnType<typeof eq>) => {
    const [row] = await storage.db
      .select()
      .from(d)
      .where(and(where, gt(d.expiresAt, clock.now())))
      .limit(1);
    return row ? polledOf(row) : undefined;
  };

  const codes: DeviceCodes = {
    async find(deviceCode) {
      const [row] = await storage.db
        .select()
        .from(d)
        .where(eq(d.deviceCodeHash, await digest(deviceCode)))
        .limit(1);
      return row ? polledOf(row) : undefined;
    },
    async polled(deviceCodeHash, at, interval) {
      await storage.db
        .update(d)
        .set({ lastPolledAt: at, interval })
        .where(eq(d.deviceCodeHash, deviceCodeHash));
    },
    async claim(deviceCodeHash): Promise<ApprovedDevice | undefined> {
      const [row] = await storage.db
        .update(d)
        .set({ status: 'issued' })
        .where(and(eq(d.deviceCodeHash, deviceCodeHash), eq(d.status, 'approved')))
        .returning();
      if (!row?.personId || !row.familyId || row.authTime === null || !row.idToken) return undefined;
      return {
        personId: row.personId,
        familyId: row.familyId,
        authTime: row.authTime,
        idToken: await secrets.open(row.idToken, deviceSealContext(deviceCodeHash)),
      };
    },
  };

  return {
    codes,

    /** Records a new authorization; false when the user code's digest is taken (draw another). */
    async create(o: {
      deviceCode: string;
      userCode: string;
      orgId: string;
      clientId: string;
      scope: string[];
      interval: number;
      ttlMs: number;
    }): Promise<boolean> {
      const now = clock.now();
      const userCodeHash = await digest(o.userCode);
      // A code of an authorization that expired no longer blocks its digest.
      await storage.db.delete(d).where(and(eq(d.userCodeHash, userCodeHash), lt(d.expiresAt, now)));
      const rows = await storage.db
        .insert(d)
        .values({
          deviceCodeHash: await digest(o.deviceCode),
          userCodeHash,
          orgId: o.orgId,
          clientId: o.clientId,
          scope: scopeText(o.scope),
          status: 'pending',
          interval: o.interval,
          createdAt: now,
          expiresAt: now + o.ttlMs,
        })
        .onConflictDoNothing()
        .returning({ hash: d.deviceCodeHash });
      return rows.length === 1;
    },

    /** The live, pending authorization of a user code (normalized), if any. */
    async pendingByUserCode(userCode: string): Promise<DeviceRequest | undefined> {
      const found = await live(eq(d.userCodeHash, await digest(userCode)));
      return found?.status === 'pending' ? found : undefined;
    },

    /** The live authorization whose hosted login answers with this state. */
    byLoginState: async (state: string) => live(eq(d.loginStateHash, await digest(state))),

    /** The live authorization whose approval form carries this CSRF token. */
    byCsrf: async (token: string) => live(eq(d.csrfHash, await digest(token))),

    /** The browser that entered the code starts a sign-in, answered with `state`. */
    async startLogin(deviceCodeHash: string, browserHash: string, state: string): Promise<void> {
      await storage.db
        .update(d)
        .set({ browserHash, loginStateHash: await digest(state), csrfHash: null, personId: null })
        .where(and(eq(d.deviceCodeHash, deviceCodeHash), eq(d.status, 'pending')));
    },

    /** Who signed in for it, and the approval form's token; the state is spent. */
    async signedIn(
      deviceCodeHash: string,
      o: {
        personId: string;
        sessionId: string | undefined;
        familyId: string;
        authTime: number;
        idToken: string;
        csrfToken: string;
      },
    ): Promise<boolean> {
      const rows = await storage.db
        .update(d)
        .set({
          loginStateHash: null,
          csrfHash: await digest(o.csrfToken),
          personId: o.personId,
          sessionId: o.sessionId ?? null,
          familyId: o.familyId,
          authTime: o.authTime,
          idToken: await secrets.seal(o.idToken, deviceSealContext(deviceCodeHash)),
        })
        .where(and(eq(d.deviceCodeHash, deviceCodeHash), eq(d.status, 'pending')))
        .returning({ hash: d.deviceCodeHash });
      return rows.length === 1;
    },

    /** The person's decision, once: false when it was decided already. */
    async decide(deviceCodeHash: string, decision: 'approved' | 'denied'): Promise<boolean> {
      const rows = await storage.db
        .update(d)
        .set({ status: decision, csrfHash: null })
        .where(and(eq(d.deviceCodeHash, deviceCodeHash), eq(d.status, 'pending')))
        .returning({ hash: d.deviceCodeHash });
      return rows.length === 1;
    },
  };
}

export type DeviceStore = ReturnType<typeof createDeviceStore>;
