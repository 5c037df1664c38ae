// What the authorization_code and refresh_token grants need of the plugin that stores codes and token
// families (oauth2-authorize's store/): the grants decide, the stores remember.

/** An access token issued in a family: what revoking the family revokes too. */
export interface IssuedAccess {
  jti: string;
  /** Seconds since the epoch. */
  exp: number;
}

/** An authorization code as its exchange finds it. */
export interface RedeemedCode {
  codeHash: string;
  familyId: string;
  orgId: string;
  clientId: string;
  redirectUri: string;
  scope: string[];
  codeChallenge: string | undefined;
  /** The resource of the authorization request (RFC 8707); undefined: the organization's own audience. */
  resource: string | undefined;
  personId: string;
  /** Seconds since the epoch. */
  authTime: number;
  /** The ID token minted at the login. */
  idToken: string;
  /** Members the OIDC `claims` parameter asked for at userinfo: carried by the access tokens. */
  userinfoClaims: string[];
  /** The DPoP key the authorization request bound the code to (RFC 9449 §10); undefined: none. */
  dpopJkt: string | undefined;
}

/** What an exchange finds for a code. */
export type BurntCode =
  | { kind: 'fresh'; code: RedeemedCode }
  | { kind: 'expired' }
  | { kind: 'replayed'; code: RedeemedCode; access?: IssuedAccess }
  | { kind: 'unknown' };

/** The codes the authorization endpoint issued, burnt once by their exchange. */
export interface CodeRedemption {
  burn(code: string): Promise<BurntCode>;
  recordAccess(codeHash: string, access: IssuedAccess): Promise<void>;
}

/** A grant to a client on behalf of a person, as a refresh sees it. */
export interface GrantFamily {
  familyId: string;
  orgId: string;
  clientId: string;
  personId: string;
  scope: string[];
  methods: string[];
  /** The resource (RFC 8707) its access tokens are for; undefined: the organization's own audience. */
  resource: string | undefined;
  authTime: number;
  revoked: boolean;
  /** The sign-in session the grant came from (`sid` of refreshed ID tokens); undefined before sessions. */
  sessionId: string | undefined;
  /** Members the OIDC `claims` parameter asked for at userinfo: carried by the access tokens. */
  userinfoClaims: string[];
  /** The DPoP key its refresh tokens are bound to (RFC 9449 §5), its JWK thumbprint; undefined: none. */
  dpopJkt: string | undefined;
}

/** A refresh token presented, with its family. */
export interface PresentedRefresh {
  tokenHash: string;
  family: GrantFamily;
  /** Milliseconds since the epoch. */
  expiresAt: number;
  /** When it stopped being good (used, or superseded); undefined while it is good. */
  spentAt: number | undefined;
}

/** Token families and their refresh tokens. */
export interface GrantFamilies {
  /** Whether the family still stands, waiting for a revocation under way. */
  stillGranted(familyId: string): Promise<boolean>;
  /** Binds the family's refresh tokens to a DPoP key, unless they are bound already (RFC 9449 §5). */
  bindKey(familyId: string, jkt: string): Promise<void>;
  /** Stores a new refresh token of the family; false when the family was revoked meanwhile. */
  addRefresh(familyId: string, token: string, lifetimeMs: number, access: IssuedAccess): Promise<boolean>;
  findRefresh(token: string): Promise<PresentedRefresh | undefined>;
  /** Spends the token if it is good for this client now, in one statement; else undefined. */
  spendFresh(token: string, clientId: string): Promise<PresentedRefresh | undefined>;
  /** Puts back a token spent by spendFresh, for a refresh refused before anything was issued. */
  unspend(found: PresentedRefresh): Promise<void>;
  spend(tokenHash: string, at?: number): Promise<{ won: true } | { won: false; spentAt: number }>;
}

/** Revokes a family and every unexpired access token issued in it. */
export type FamilyRevoker = (family: Pick<GrantFamily, 'familyId'>) => Promise<void>;

/** A device authorization (RFC 8628) as the device's poll finds it. Times in milliseconds. */
export interface PolledDevice {
  deviceCodeHash: string;
  orgId: string;
  clientId: string;
  scope: string[];
  status: 'pending' | 'approved' | 'denied' | 'issued';
  /** Seconds the device must wait between polls. */
  interval: number;
  lastPolledAt: number | undefined;
  expiresAt: number;
}

/** What the person's approval recorded, for the tokens. */
export interface ApprovedDevice {
  personId: string;
  /** The token family made at the person's sign-in. */
  familyId: string;
  /** Seconds since the epoch. */
  authTime: number;
  /** The ID token minted at the sign-in. */
  idToken: string;
}

/** The device authorizations, as the device_code grant reads and spends them. */
export interface DeviceCodes {
  find(deviceCode: string): Promise<PolledDevice | undefined>;
  /** Records a poll at `at` (ms) and the interval (s) it leaves. */
  polled(deviceCodeHash: string, at: number, interval: number): Promise<void>;
  /** Turns an approved authorization into an issued one, in one statement; undefined when not approved. */
  claim(deviceCodeHash: string): Promise<ApprovedDevice | undefined>;
}
