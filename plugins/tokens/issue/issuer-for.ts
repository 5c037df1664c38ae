import { isIssuerOf } from '../../../core/tokens/issuers.ts';

/**
 * The `iss` of a token for organization `orgId`: `asked` when it is one of the organization's issuers
 * (the deployment's or its own, core/tokens/issuers.ts), the deployment's when none is asked. Another
 * organization's issuer is a programming error of the caller, never signed.
 */
export function issuerFor(deployment: string, orgId: string, asked: string | undefined): string {
  if (asked === undefined) return deployment;
  if (!isIssuerOf(asked, deployment, orgId))
    throw new Error(`tokens: ${JSON.stringify(asked)} is not an issuer of organization ${orgId}`);
  return asked;
}
