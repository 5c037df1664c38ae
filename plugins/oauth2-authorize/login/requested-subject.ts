import type { ClaimAsk, ClaimsRequest } from '../authorize/oidc-params.ts';

/**
 * Whether the person may answer an authorization request whose `claims` parameter names a subject:
 * OpenID Connect Core §5.5.1 says that when `sub` is asked for with a value, no ID token or access token
 * for another person may be answered, even one signed in. A `sub` asked with `value` (or `values`), at
 * the ID token or at userinfo, must be the person; one asked without is no condition.
 */
export function subjectAllowed(claims: ClaimsRequest | undefined, personId: string): boolean {
  const asks = [claims?.id_token?.sub, claims?.userinfo?.sub].filter(
    (ask): ask is ClaimAsk => ask !== undefined && ask !== null,
  );
  return asks.every(
    (ask) =>
      (ask.value === undefined || ask.value === personId) &&
      (ask.values === undefined || ask.values.includes(personId)),
  );
}

/** What the client hears when someone else signed in than the person its request named. */
export const OTHER_SUBJECT =
  'the request names another person by the sub of its claims parameter (OpenID Connect Core section 5.5.1)';
