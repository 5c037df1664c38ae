import { and, eq, isNull } from 'drizzle-orm';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import type { ClaimsRequest, Prompt } from '../authorize/oidc-params.ts';
import { AuthorizeErrors } from '../errors.ts';
import { oauth2AuthorizeLogins } from '../schema.ts';
import type { SessionFactor } from '../sessions/store.ts';
import { digest, scopeList, scopeText } from './digest.ts';

/** An authorization request validated by GET /oauth2/authorize, waiting for its login. */
export interface PendingLogin {
  orgId: string;
  clientId: string;
  redirectUri: string;
  scope: string[];
  state: string | undefined;
  nonce: string | undefined;
  codeChallenge: string | undefined;
  /** The resource asked for (RFC 8707); undefined: the organization's own audience. */
  resource: string | undefined;
  responseMode: 'query' | 'form_post';
  /**
   * The client's issuer when the login opened, the `iss` of its answer (RFC 9207) and of its tokens;
   * undefined: the deployment's (logins opened before clients had issuers of their own).
   */
  issuer?: string | undefined;
  /** The OIDC `claims` parameter, checked. */
  claims: ClaimsRequest | undefined;
  acrValues: string[] | undefined;
  prompt: Prompt[];
  /**
   * The browser's session of the organization when the login opened (a new sign-in of its person renews
   * it, another person's replaces it), then the session the sign-in started, which a consent page's
   * answer must come with.
   */
  sessionId: string | undefined;
  /** A sign-in waiting for its second factor: who signed in with which first factor. */
  pending?: PendingSignIn | undefined;
  /** The digest of the cookie of the browser that opened it (as stored; not part of a new login). */
  browserHash?: string;
  /** The DPoP key the code is to be bound to (RFC 9449 §10); absent: none. */
  dpopJkt?: string | undefined;
}

/** The first factor of a sign-in waiting for its second. */
export interface PendingSignIn {
  personId: string;
  factors: SessionFactor[];
  /** The SSO provider, for the ID token's `idp`. */
  idp?: string;
}

/** What a submitted form finds for its login. */
export type FoundLogin =
  | { kind: 'open'; login: PendingLogin; browserHash: string }
  | { kind: 'used' | 'expired' | 'unknown' };

/**
 * The login a form or a provider's return continues: open, and continued by the browser that opened it
 * (`browserHash`, the digest of its cookie); else the error page that says which of those failed.
 */
export function requireOpenLogin(
  found: FoundLogin,
  browserHash: string | undefined,
  why: { unknown: string; otherBrowser: string },
): PendingLogin {
  if (found.kind !== 'open')
    throw AuthorizeErrors.LOGIN_NOT_FOUND(
      found.kind === 'expired'
        ? 'this sign-in took too long and has expired'
        : found.kind === 'used'
          ? 'this sign-in has already been completed'
          : why.unknown,
    );
  if (browserHash === undefined || browserHash !== found.browserHash)
    throw AuthorizeErrors.LOGIN_FORBIDDEN(why.otherBrowser);
  return found.login;
}

const pendingOf = (row: typeof oauth2AuthorizeLogins.$inferSelect): PendingLogin => ({
  orgId: row.orgId,
  clientId: row.clientId,
  redirectUri: row.redirectUri,
  scope: scopeList(row.scope),
  state: row.state ?? undefined,
  nonce: row.nonce ?? undefined,
  codeChallenge: row.codeChallenge ?? undefined,
  resource: row.resource ?? undefined,
  responseMode: row.responseMode === 'form_post' ? 'form_post' : 'query',
  ...(row.issuer !== null ? { issuer: row.issuer } : {}),
  claims: row.claims ? (JSON.parse(row.claims) as ClaimsRequest) : undefined,
  acrValues: row.acrValues ? row.acrValues.split(' ') : undefined,
  prompt: row.prompt ? (row.prompt.split(' ') as Prompt[]) : [],
  sessionId: row.sessionId ?? undefined,
  ...(row.pending ? { pending: JSON.parse(row.pending) as PendingSignIn } : {}),
  browserHash: row.browserHash,
  ...(row.dpopJkt !== null ? { dpopJkt: row.dpopJkt } : {}),
});

/** Logins under way: started by the authorization endpoint, finished (once) by the hosted form. */
export function createLoginStore(deps: { storage: Storage; clock: Clock; ttlMs: number }) {
  const { storage, clock } = deps;
  const t = oauth2AuthorizeLogins;

  return {
    /** Records a login; `loginId` goes into the form, `browser` is the browser cookie's value. */
    async open(loginId: string, browser: string, login: PendingLogin): Promise<void> {
      await this.openHashed(loginId, await digest(browser), login);
    },

    /** `open` for a browser known by the digest of its cookie (a later step of a login it opened). */
    async openHashed(loginId: string, browserHash: string, login: PendingLogin): Promise<void> {
      const loginHash = await digest(loginId);
      await storage.db.insert(t).values({
        loginHash,
        browserHash,
        orgId: login.orgId,
        clientId: login.clientId,
        redirectUri: login.redirectUri,
        scope: scopeText(login.scope),
        state: login.state ?? null,
        nonce: login.nonce ?? null,
        codeChallenge: login.codeChallenge ?? null,
        resource: login.resource ?? null,
        responseMode: login.responseMode === 'form_post' ? 'form_post' : null,
        issuer: login.issuer ?? null,
        claims: login.claims ? JSON.stringify(login.claims) : null,
        acrValues: login.acrValues?.join(' ') ?? null,
        prompt: login.prompt.length ? login.prompt.join(' ') : null,
        sessionId: login.sessionId ?? null,
        pending: login.pending ? JSON.stringify(login.pending) : null,
        dpopJkt: login.dpopJkt ?? null,
        expiresAt: clock.now() + deps.ttlMs,
      });
    },

    async find(loginId: string): Promise<FoundLogin> {
      return this.findHashed(await digest(loginId));
    },

    /** The login of this digest of its ID (what an SSO sign-in is bound to). */
    async findHashed(loginHash: string): Promise<FoundLogin> {
      const [row] = await storage.db.select().from(t).where(eq(t.loginHash, loginHash)).limit(1);
      if (!row) return { kind: 'unknown' };
      if (row.usedAt !== null) return { kind: 'used' };
      if (row.expiresAt <= clock.now()) return { kind: 'expired' };
      return { kind: 'open', browserHash: row.browserHash, login: pendingOf(row) };
    },

    /**
     * The authorization request of a login, finished or not, while the login has not expired: what a
     * replayed provider answer shows the page again for. Undefined once it expired (or was swept).
     */
    async requestOfHashed(
      loginHash: string,
    ): Promise<{ login: PendingLogin; browserHash: string } | undefined> {
      const [row] = await storage.db.select().from(t).where(eq(t.loginHash, loginHash)).limit(1);
      if (!row || row.expiresAt <= clock.now()) return undefined;
      return { login: pendingOf(row), browserHash: row.browserHash };
    },

    /** Records the session a login signed in, for its consent page's answer. */
    async signedIn(loginId: string, sessionId: string): Promise<void> {
      await storage.db
        .update(t)
        .set({ sessionId })
        .where(eq(t.loginHash, await digest(loginId)));
    },

    /** Marks the login finished; false when another submission finished it first. */
    async finish(loginId: string): Promise<boolean> {
      return this.finishHashed(await digest(loginId));
    },

    /** `finish` by the digest of the login's ID. */
    async finishHashed(loginHash: string): Promise<boolean> {
      const rows = await storage.db
        .update(t)
        .set({ usedAt: clock.now() })
        .where(and(eq(t.loginHash, loginHash), isNull(t.usedAt)))
        .returning({ h: t.loginHash });
      return rows.length === 1;
    },
  };
}

export type LoginStore = ReturnType<typeof createLoginStore>;
