import * as v from 'valibot';
import type { GuardedFetch } from '../../../core/ports/outbound-requests.ts';

/**
 * A provider's options object: a member it does not know is refused by name, a missing required one
 * says so (valibot reports both with the object's message, told apart by the value).
 */
export function strictOptions<const E extends v.ObjectEntries>(entries: E, provider: string) {
  const accepted = ['authorize_scopes', ...Object.keys(entries)].join(', ');
  return v.strictObject(entries, (issue) =>
    issue.input === undefined ? 'is required' : `is not an option of ${provider} (accepted: ${accepted})`,
  );
}

/** Options of a provider that has none beyond `authorize_scopes`: anything else is refused by name. */
export const noOptions = v.strictObject({}, 'is not an option of this provider (accepted: authorize_scopes)');

/**
 * GETs a JSON resource of the provider with the access token, through the service's guarded fetch; a
 * non-2xx answer (a redirect included: none is followed) is an error naming the URL.
 */
export async function fetchWithToken<T>(fetch: GuardedFetch, url: string, accessToken: string): Promise<T> {
  const res = await fetch(url, {
    headers: {
      authorization: `Bearer ${accessToken}`,
      accept: 'application/json',
      'user-agent': 'identity-service',
    },
  });
  if (!res.ok)
    throw new Error(
      `the provider answered ${res.status} to GET ${new URL(url).origin}${new URL(url).pathname}`,
    );
  return (await res.json()) as T;
}

/** A string member of an untyped object (a profile answer, ID token claims), or undefined. */
export const str = (o: Record<string, unknown> | undefined, key: string): string | undefined => {
  const value = o?.[key];
  return typeof value === 'string' && value !== ''
    ? value
    : typeof value === 'number'
      ? String(value)
      : undefined;
};

/** The profile of an OIDC provider from its verified ID token's claims. */
export function profileFromClaims(claims: Record<string, unknown> | undefined) {
  const subject = str(claims, 'sub');
  if (!subject) throw new Error('the ID token carries no sub claim');
  const email = str(claims, 'email');
  return {
    subject,
    ...(email ? { email } : {}),
    emailVerified: claims?.email_verified === true || claims?.email_verified === 'true',
    ...(str(claims, 'name') ? { name: str(claims, 'name') } : {}),
    ...(str(claims, 'picture') ? { picture: str(claims, 'picture') } : {}),
  };
}
