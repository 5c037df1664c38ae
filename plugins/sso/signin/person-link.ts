import type {
  PersonDirectory,
  PersonRecord,
  ProspectivePerson,
} from '../../../core/capabilities/person-directory.ts';
import { ServiceError } from '../../../core/errors.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import type { SsoProfile } from '../../../core/sso/define-provider.ts';
import { SignInFailure } from './failure.ts';

/** Whom an SSO sign-in is for; `prospective` when it is the person's first, not stored yet. */
export interface SsoPerson {
  person: PersonRecord;
  prospective?: ProspectivePerson;
}

/**
 * The person an SSO sign-in is for: the one holding the provider's verified email address, verified
 * here too and active, or a new person with it, stored by the issuer once the token_minted hook allows
 * the token (a blocked first sign-in leaves nobody). Anything else is a SignInFailure.
 */
export async function personFor(
  directory: PersonDirectory,
  orgId: string,
  profile: SsoProfile,
  rc: RequestContext,
): Promise<SsoPerson> {
  if (!profile.email)
    throw new SignInFailure('no_email', 'access_denied', 'the provider gave no email address');
  if (!profile.emailVerified)
    throw new SignInFailure(
      'unverified_email',
      'access_denied',
      'the provider does not vouch for the email address',
    );
  const handle = directory.normaliseHandle({ type: 'email_address', value: profile.email });
  // Linking needs a verified email on both sides: the provider's (above) and ours. A person holding
  // the address unverified may have been made by someone who does not own it.
  const linked = (person: PersonRecord) => {
    if (person.handles.some((h) => h.type === handle.type && h.value === handle.value && h.verified))
      return person;
    throw new SignInFailure(
      'unverified_handle',
      'access_denied',
      'the person holding this email address has not verified it, so the sign-in is not linked to them',
      person,
    );
  };
  const found = await directory.findByHandle(orgId, handle);
  if (found) {
    const person = linked(found);
    if (!person.active)
      throw new SignInFailure('person_disabled', 'access_denied', 'this person is disabled', person, [
        'oidc',
      ]);
    return { person };
  }
  const prospective = directory.prospectWithHandles(orgId, {
    handles: [{ ...handle, verified: true }],
    analytics: rc.analytics,
  });
  return { person: prospective.person, prospective };
}

/** A first sign-in's person that another sign-in of the same person stored first (a 409 from create). */
export const storedMeanwhile = (e: unknown, who: SsoPerson) =>
  who.prospective !== undefined && e instanceof ServiceError && e.status === 409;

/**
 * After `storedMeanwhile`: the person another sign-in (or the API) stored with the address, under the
 * same checks as any sign-in (verified address, active); a SignInFailure otherwise, and when no person
 * holds the address any more (deleted again at once).
 */
export async function storedPersonFor(
  directory: PersonDirectory,
  orgId: string,
  profile: SsoProfile,
  rc: RequestContext,
): Promise<PersonRecord> {
  const who = await personFor(directory, orgId, profile, rc);
  if (!who.prospective) return who.person;
  throw new SignInFailure(
    'token_not_issued',
    'server_error',
    'another sign-in stored a person with this email address, and it is gone again',
  );
}
