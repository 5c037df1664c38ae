import type { SsoProfile } from 'identity-service/core';
import * as v from 'valibot';

/** Why Acme ID's account could not be read; the sign-in flow reports it as a provider error. */
export class AcmeProfileError extends Error {
  override readonly name = 'AcmeProfileError';
  constructor(
    readonly code: 'ACME_USERINFO_REFUSED' | 'ACME_USERINFO_UNREADABLE',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The part of Acme ID's `GET /api/v2/me` answer the service reads; other members are ignored. */
const account = v.object({
  id: v.union([v.pipe(v.number(), v.integer()), v.pipe(v.string(), v.minLength(1))]),
  email: v.nullish(v.string()),
  /** When Acme ID confirmed the address (RFC 3339), null while it is unconfirmed. */
  email_verified_at: v.nullish(v.string()),
  display_name: v.nullish(v.string()),
  avatar_url: v.nullish(v.string()),
});

/**
 * The fetch the service hands a provider's `profile` (`credential.fetch`, the guarded one): what this
 * provider needs of it.
 */
export type ProfileFetch = (
  url: string,
  init: { headers: Record<string, string>; redirect: 'error'; signal: AbortSignal },
) => Promise<Response>;

/** How long the userinfo request may take before the sign-in gives up. */
const USERINFO_TIMEOUT_MS = 10_000;

/**
 * Reads the signed-in account from Acme ID's userinfo endpoint with the access token of the code
 * exchange, and maps it to the service's profile. `fetch` is the service's (`credential.fetch`): its
 * address guard keeps the request on https and off private networks, whatever the tenant's domain
 * resolves to.
 */
export async function fetchAcmeProfile(
  url: string,
  accessToken: string,
  fetch: ProfileFetch,
): Promise<SsoProfile> {
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
      // A redirect would carry the bearer token to wherever it points: the endpoint never redirects (the
      // service's fetch never follows one; a stand-in in tests honours this).
      redirect: 'error',
      signal: AbortSignal.timeout(USERINFO_TIMEOUT_MS),
    });
  } catch (cause) {
    throw new AcmeProfileError('ACME_USERINFO_UNREADABLE', `acme: the userinfo request failed`, { cause });
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new AcmeProfileError('ACME_USERINFO_REFUSED', `acme: the userinfo endpoint answered ${res.status}`);
  }
  const parsed = v.safeParse(account, await res.json().catch(() => undefined));
  if (!parsed.success)
    throw new AcmeProfileError(
      'ACME_USERINFO_UNREADABLE',
      `acme: the userinfo answer is not an account (${v.summarize(parsed.issues)})`,
    );
  const a = parsed.output;
  const email = a.email?.trim() || undefined;
  return {
    subject: String(a.id),
    ...(email ? { email } : {}),
    // Acme ID vouches for an address only once it has confirmed it; an unconfirmed one must never let
    // someone take over the person who owns that address here.
    emailVerified: email !== undefined && typeof a.email_verified_at === 'string',
    ...(a.display_name ? { name: a.display_name } : {}),
    ...(a.avatar_url ? { picture: a.avatar_url } : {}),
  };
}
