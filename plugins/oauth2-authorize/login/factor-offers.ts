import type { HostedLoginEmailCodes } from '../../../core/capabilities/hosted-login-email-codes.ts';
import type { OAuthClientUiConfiguration } from '../../../core/capabilities/oauth2-server.ts';
import type { SignInCompletion } from '../../../core/capabilities/sign-in-completion.ts';
import { handleTypesOf } from './page-look.ts';

/**
 * What the hosted login offers an organization, as its authentication policy says now (read at each
 * request): every first factor without the factors plugin.
 */
export function factorOffers(deps: {
  completion: () => SignInCompletion | undefined;
  emailCodes: () => HostedLoginEmailCodes | undefined;
}) {
  const allows = async (orgId: string, method: string) =>
    (await deps.completion()?.allows(orgId, method)) ?? true;
  return {
    allows,
    /** "Email me a sign-in code": the email-codes plugin, a client taking email addresses, the policy's otp_via_email. */
    emailCodeOffered: async (orgId: string, ui: OAuthClientUiConfiguration | undefined) =>
      deps.emailCodes() !== undefined &&
      handleTypesOf(ui).includes('email_address') &&
      (await allows(orgId, 'otp_via_email')),
    /** "Email me a sign-in link": as the code's, for the policy's email_link. */
    emailLinkOffered: async (orgId: string, ui: OAuthClientUiConfiguration | undefined) =>
      deps.emailCodes() !== undefined &&
      handleTypesOf(ui).includes('email_address') &&
      (await allows(orgId, 'email_link')),
  };
}
