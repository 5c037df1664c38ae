import { CoreErrors } from '../../../../core/errors.ts';

/** The members that have a second name in the reference: the deprecated or the vendor's one. */
interface AliasedMembers {
  external_cred_id?: string | undefined;
  external_cred?: string | undefined;
  enable_in_service_oidc_authz_server?: boolean | undefined;
  enable_in_slashid_oidc_authz_server?: boolean | undefined;
}

/** The members under their own names, each from whichever name the client used. */
export interface ResolvedMembers {
  externalCredId: string | undefined;
  enableInAuthzServer: boolean | undefined;
}

/** One member given under either name; both given must agree, else a 400 naming both. */
function either<T>(name: string, value: T | undefined, alias: string, aliased: T | undefined): T | undefined {
  if (value !== undefined && aliased !== undefined && value !== aliased)
    throw CoreErrors.VALIDATION(
      `body.${alias} and body.${name} name the same member and disagree (${JSON.stringify(aliased)} and ${JSON.stringify(value)}): send only ${name}`,
    );
  return value ?? aliased;
}

/**
 * Reads the members the reference also names otherwise: `external_cred` (deprecated there) for
 * `external_cred_id`, and `enable_in_slashid_oidc_authz_server` (the vendor's spelling of the spec's
 * flag), so a client written for the vendor's names works unchanged.
 */
export function resolveAliases(body: AliasedMembers): ResolvedMembers {
  return {
    externalCredId: either('external_cred_id', body.external_cred_id, 'external_cred', body.external_cred),
    enableInAuthzServer: either(
      'enable_in_service_oidc_authz_server',
      body.enable_in_service_oidc_authz_server,
      'enable_in_slashid_oidc_authz_server',
      body.enable_in_slashid_oidc_authz_server,
    ),
  };
}
