import {
  eventHandleOf,
  type PersonDirectory,
  type PersonRecord,
} from '../../../core/capabilities/person-directory.ts';
import type { IssuedToken, IssueRequest } from '../../../core/capabilities/token-issuer.ts';
import type { AuthenticationDetails } from '../../../core/events/shared-types.ts';
import { uuidv7 } from '../../../core/ids.ts';
import type { CounterSeries } from '../../../core/metrics/types.ts';
import type { PluginContext } from '../../../core/plugin.ts';
import type { JsonValue } from '../../../core/ports/event-bus.ts';
import { beforeTokenIssued, type TokenAuthentication } from '../../../core/tokens/before-token-issued.ts';
import { ID_TOKEN_CLAIMS } from '../../../core/tokens/reserved-claims.ts';
import { collectServiceClaims } from '../../../core/tokens/service-claims.ts';
import { TokenErrors } from '../errors.ts';
import { forbiddenClaim } from './claims.ts';
import type { createFirstTokens } from './first-token.ts';
import { issuerFor } from './issuer-for.ts';
import type { TokenKeys } from './keys.ts';

export interface IssuerDeps {
  ctx: PluginContext<unknown>;
  persons: PersonDirectory;
  keys: TokenKeys;
  firstTokens: ReturnType<typeof createFirstTokens>;
  reserved: ReadonlySet<string>;
  lifetimeSeconds: number;
}

// The spec's AuthenticationDetails carries a handle "only for factor methods that allow it", and its
// AuthenticationSucceeded_v1 has none "for SSO authentications": the provider, not a handle the person
// typed, authenticated them. The token_minted hook's content keeps the address the provider gave.
const SSO_METHODS: ReadonlySet<string> = new Set(['oidc', 'saml']);

/** An authentication as events carry it: the handle's type as its PersonHandleType number. */
function authenticationDetails(a: TokenAuthentication): AuthenticationDetails {
  const handle = SSO_METHODS.has(a.method) ? undefined : eventHandleOf(a.handle);
  return { timestamp: a.timestamp, method: a.method, ...(handle ? { handle } : {}) };
}

/** Events need an address; a request of unknown origin (a test, an in-process call) gives the unspecified one. */
const UNKNOWN_ADDRESS = '0.0.0.0';

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/** OpenID Connect's ID token claims: for the client (aud and azp), the request's nonce, auth_time. */
const idTokenClaims = (id: NonNullable<IssueRequest['idToken']>): Record<string, JsonValue> => ({
  ...id.claims,
  aud: id.clientId,
  azp: id.clientId,
  auth_time: id.authTime,
  ...(id.nonce !== undefined ? { nonce: id.nonce } : {}),
  ...(id.sessionId !== undefined ? { sid: id.sessionId } : {}),
  ...(id.amr?.length ? { amr: id.amr } : {}),
  ...(id.acr !== undefined ? { acr: id.acr } : {}),
});

/**
 * `issue` of the tokenIssuer capability: the claims, the beforeTokenIssued hook (not for `mint`), the
 * first-token decision, the signature with the deployment's token key, and the event.
 */
export function createIssue(deps: IssuerDeps) {
  const { ctx, persons, keys, firstTokens, reserved, lifetimeSeconds } = deps;
  const iss = ctx.config.publicBaseUrl;
  const issuedTokens = ctx.metrics.counter({
    name: 'identity_tokens_issued_total',
    help: 'Identity tokens signed, by what issued them: authentication, anonymous, oauth2 (ID tokens), mint',
    labelNames: ['issuer'],
  });
  const issued: Record<IssueRequest['issuer'], CounterSeries> = {
    authentication: issuedTokens.labels({ issuer: 'authentication' }),
    anonymous: issuedTokens.labels({ issuer: 'anonymous' }),
    oauth2: issuedTokens.labels({ issuer: 'oauth2' }),
    mint: issuedTokens.labels({ issuer: 'mint' }),
  };

  /** TokenMinted_v1 (AnonymousTokenMinted_v1 for an anonymous person) for a token just signed. */
  async function announce(
    req: IssueRequest,
    person: Pick<PersonRecord, 'personId' | 'personType'>,
    tokenId: string,
    issuedAt: number,
    expiresAt: number,
    firstToken: boolean,
  ) {
    const base = {
      analytics_metadata: {
        analytics_correlation_id: req.request.correlationId ?? crypto.randomUUID(),
        client_ip_address: req.request.clientIpAddress ?? UNKNOWN_ADDRESS,
      },
      token_id: tokenId,
      person_id: person.personId,
      mint_token_api: req.issuer === 'mint',
      issued_at: iso(issuedAt),
      expires_at: iso(expiresAt),
    };
    // The person's type decides, not the route: mint-token for an anonymous person is anonymous too.
    if (person.personType === 'anonymous')
      await ctx.events.publish(req.orgId, 'AnonymousTokenMinted_v1', base);
    else
      await ctx.events.publish(req.orgId, 'TokenMinted_v1', {
        ...base,
        ...(req.prevAnonymousPersonId ? { prev_anonymous_person_id: req.prevAnonymousPersonId } : {}),
        first_token: firstToken,
        authentications: req.authentications.map(authenticationDetails),
      });
  }

  return async function issue(req: IssueRequest): Promise<IssuedToken> {
    const { prospective } = req;
    if (prospective && (prospective.person.personId !== req.personId || req.issuer === 'mint'))
      throw new Error('tokens: a prospective person is for a sign-up: its personId, not a minted token');
    if (req.accessToken && (req.issuer !== 'oauth2' || req.idToken || req.hookOnly || prospective))
      throw new Error('tokens: an access token is issued by oauth2 alone, without an ID token or a sign-up');
    if (req.person && (prospective || req.person.personId.toLowerCase() !== req.personId.toLowerCase()))
      throw new Error("tokens: a person read by the caller is personId's, and not with a prospective one");
    const [person, groupsClaim] = await Promise.all([
      prospective ? prospective.person : (req.person ?? persons.get(req.orgId, req.personId)),
      persons.groupsClaimName(req.orgId),
    ]);
    if (!person || person.orgId !== req.orgId) throw TokenErrors.PERSON_NOT_FOUND(req.personId);
    // Every way in refuses a disabled person before it gets here; mint-token asks for one by ID.
    if (!person.active) throw TokenErrors.PERSON_DISABLED(req.personId);
    const custom = req.customClaims ?? {};
    // An ID token's own claims are the issuer's too: a hook may not change whom or what it is for.
    const forbidden = req.idToken ? new Set([...reserved, ...ID_TOKEN_CLAIMS]) : reserved;
    const refused = forbiddenClaim(custom, forbidden, groupsClaim);
    if (refused !== undefined)
      throw TokenErrors.INVALID_CUSTOM_CLAIMS(
        `custom_claims.${refused}: ${JSON.stringify(refused)} is a registered or reserved claim and cannot be set`,
      );

    // An ID token carries its client's issuer: the deployment's or its organization's own.
    const tokenIss = issuerFor(iss, req.orgId, req.idToken?.issuer);
    const nowMs = ctx.clock.now();
    const now = Math.floor(nowMs / 1000);
    // A UUID v7: its first 48 bits are the issue time in milliseconds, finer than iat's seconds, so a
    // revocation of the person's earlier tokens spares one issued a moment later in the same second.
    const jti = uuidv7(nowMs);
    const claims: Record<string, JsonValue> = {
      iss: tokenIss,
      sub: person.personId,
      // The spec's audience of an identity token: its organization. An ID token's is its client instead,
      // and that is how validation tells the two apart (they share the keys, the issuer and typ JWT).
      aud: req.orgId,
      oid: req.orgId,
      person_id: person.personId,
      authenticated_methods: req.methods,
      first_token: false,
      jti,
      iat: now,
      exp: now + lifetimeSeconds,
      [groupsClaim]: person.groups,
      ...(req.idToken ? idTokenClaims(req.idToken) : {}),
      ...custom,
      // Roles, consents: reserved claims other plugins own, for every token (mint-token's too).
      ...(await collectServiceClaims(ctx.hooks, {
        orgId: req.orgId,
        personId: person.personId,
        issuer: req.issuer,
      })),
    };

    if (req.issuer !== 'mint') {
      // Provisional: the insert after the hook decides, so a blocked issuance is never anybody's first.
      // An access token of a token exchange is never the person's first: it follows a token they had.
      const first = req.accessToken ? false : await firstTokens.isFirst(req.orgId, person.personId);
      const results = await ctx.hooks.run(beforeTokenIssued, {
        orgId: req.orgId,
        personId: person.personId,
        issuer: req.issuer,
        claims: { ...claims, first_token: first },
        refusesClaim: (claim) => forbidden.has(claim) || claim === groupsClaim,
        content: {
          aud: req.orgId,
          iss: tokenIss,
          sub: person.personId,
          region: person.region,
          first_token: first,
          groups_claim_name: groupsClaim,
          authentications: req.authentications,
          // The spec's three strings, each always there: empty when the request did not say (no Origin
          // header, an in-process call without an address).
          request_metadata: {
            client_ip_address: req.request.clientIpAddress ?? '',
            origin: req.request.origin ?? '',
            user_agent: req.request.userAgent ?? '',
          },
        },
      });
      for (const result of results) {
        const added = result?.claims ?? {};
        const blocked = forbiddenClaim(added, forbidden, groupsClaim);
        if (blocked !== undefined) throw TokenErrors.HOOK_CLAIM_RESERVED(blocked);
        // Defined, not assigned: a claim named __proto__ stays a claim (assigning it sets the prototype).
        for (const [name, value] of Object.entries(added))
          Object.defineProperty(claims, name, {
            value,
            enumerable: true,
            writable: true,
            configurable: true,
          });
      }
    }

    // A sign-up's person exists once the hook allowed it, before anything is signed or announced for it.
    if (prospective) await prospective.create();

    // The hook's decision was all the caller wanted: a token nobody receives is neither signed, nor
    // announced by TokenMinted_v1, nor anybody's first.
    if (req.hookOnly)
      return {
        token: '',
        tokenId: jti,
        claims,
        firstToken: false,
        issuedAt: now,
        expiresAt: now + lifetimeSeconds,
      };

    // The hook allowed the caller's access token: signed now, and announced in place of an identity token.
    if (req.accessToken) {
      const signed = await req.accessToken();
      await announce(req, person, signed.claims.jti, signed.claims.iat, signed.claims.exp, false);
      return {
        token: signed.token,
        tokenId: signed.claims.jti,
        claims,
        firstToken: false,
        issuedAt: signed.claims.iat,
        expiresAt: signed.claims.exp,
      };
    }

    // A minted token is nobody's first (the reference's mint-token payload says first_token false): it
    // leaves the person's first token to the first real authentication.
    const firstToken = req.issuer === 'mint' ? false : await firstTokens.claim(req.orgId, person.personId);
    claims.first_token = firstToken;
    const token = await keys.sign(claims);

    await announce(req, person, jti, now, now + lifetimeSeconds, firstToken);
    issued[req.issuer].inc();
    return { token, tokenId: jti, claims, firstToken, issuedAt: now, expiresAt: now + lifetimeSeconds };
  };
}
