import type { PersonDirectory, PersonRecord } from '../../../core/capabilities/person-directory.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import type { SsoProfile } from '../../../core/sso/define-provider.ts';
import { SignInFailure } from './failure.ts';

/**
 * The person an SSO sign-in is for: the one holding the provider's verified email address, verified
 * here too, or a new person with it. Anything else is a SignInFailure.
 */
export async function personFor(
  directory: PersonDirectory,
  orgId: string,
  profile: SsoProfile,
  rc: RequestContext,
): Promise<PersonRecord> {
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
  if (found) return linked(found);
  try {
    return await directory.createWithHandles(orgId, {
      handles: [{ ...handle, verified: true }],
      analytics: rc.analytics,
    });
  } catch (e) {
    // Two first sign-ins of one person raced: the other one created it.
    const again = await directory.findByHandle(orgId, handle);
    if (again) return linked(again);
    throw e;
  }
}
