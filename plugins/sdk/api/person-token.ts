import type { PersonDirectory, PersonRecord } from '../../../core/capabilities/person-directory.ts';
import type { InvalidReason, TokenIssuer } from '../../../core/capabilities/token-issuer.ts';
import { SdkErrors } from '../errors.ts';

/** A person token that validated, and the person it names. */
export interface TokenPerson {
  person: PersonRecord;
  tokenId: string;
  /** Its `exp`, seconds since the epoch. */
  expiresAt: number;
}

/** A 401 with the RFC 6750 challenge: `Bearer`, and `error="invalid_token"` for a token that was sent. */
export function unauthorized(message: string, sent: boolean) {
  const challenge = sent ? 'Bearer error="invalid_token"' : 'Bearer';
  return SdkErrors.INVALID_PERSON_TOKEN.with({ headers: { 'www-authenticate': challenge } })(message);
}

/** The token of `Authorization: Bearer <token>`, undefined without the header; 401 for another scheme. */
export function bearerOf(request: Request): string | undefined {
  const header = request.headers.get('authorization');
  if (header === null) return undefined;
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header);
  if (!match) throw unauthorized('header Authorization must be "Bearer <identity token>"', true);
  return match[1];
}

/** What a token validation says about a person token. */
export type PersonTokenCheck =
  | { ok: true; who: TokenPerson }
  /** A genuine token whose person is gone (deleted since): still revocable. */
  | { ok: false; reason: 'unknown_person'; tokenId: string; expiresAt: number }
  | { ok: false; reason: InvalidReason | 'not_a_person_token' };

/**
 * Person tokens as the SDK routes take them: identity tokens of the organization, whose person still
 * exists. The issuer's validation refuses the other tokens its keys sign (an OAuth access token, an
 * OpenID Connect ID token, whose audience is a client) as `wrong_token_type`.
 */
export function createPersonTokens(issuer: TokenIssuer, directory: PersonDirectory) {
  async function check(orgId: string, token: string): Promise<PersonTokenCheck> {
    const checked = await issuer.validate(token, orgId);
    if (!checked.valid) return { ok: false, reason: checked.reason };
    const { person_id: personId, sub, jti, exp } = checked.claims;
    if (
      typeof personId !== 'string' ||
      sub !== personId ||
      typeof jti !== 'string' ||
      typeof exp !== 'number'
    )
      return { ok: false, reason: 'not_a_person_token' };
    const person = await directory.get(orgId, personId);
    if (!person) return { ok: false, reason: 'unknown_person', tokenId: jti, expiresAt: exp };
    return { ok: true, who: { person, tokenId: jti, expiresAt: exp } };
  }

  return {
    check,
    /**
     * The active person of a valid token of this organization; 401 saying why otherwise. A deactivated
     * person's token is refused here as POST /token/validate refuses it (person_inactive); logout, which
     * only ends a session, takes it through `check`.
     */
    async personOf(orgId: string, token: string): Promise<TokenPerson> {
      const refused = (reason: string) =>
        unauthorized(`the bearer token is not a valid person token of this organization (${reason})`, true);
      const checked = await check(orgId, token);
      if (!checked.ok) throw refused(checked.reason);
      if (!checked.who.person.active) throw refused('person_inactive');
      return checked.who;
    },
  };
}

export type PersonTokens = ReturnType<typeof createPersonTokens>;
