import type * as v from 'valibot';
import { OAuth2Errors } from '../errors.ts';
import type { ClientCreateSchema, ClientPatchSchema, ClientRow } from '../schema.ts';
import type { ClientInput, ClientStore } from '../store/clients.ts';
import { metadataInput, publicOf, scopesOf } from './metadata-rules.ts';
import { checkClientShape, checkResources, unique } from './rules.ts';

/** What the client rules need of the deployment. */
export interface ClientRuleContext {
  /** PUBLIC_BASE_URL: no resource may be under it. */
  publicBaseUrl: string;
}

/** Creates a client from a validated create body (the route and the CLI): its row and, once, its secret. */
export function createClient(
  store: ClientStore,
  orgId: string,
  body: v.InferOutput<typeof ClientCreateSchema>,
  rules: ClientRuleContext,
): Promise<{ row: ClientRow; secret?: string }> {
  const scopes = scopesOf(body);
  if (scopes === undefined)
    throw OAuth2Errors.INVALID_CLIENT_SETTINGS(
      'body.scopes: is required (or scope, the RFC 7591 space-delimited string)',
    );
  const isPublic = publicOf(body);
  const shape = {
    public: isPublic,
    grantTypes: unique(body.grant_types),
    redirectUris: unique(body.redirect_uris ?? []),
  };
  checkClientShape(shape, 'body');
  checkResources(body.resources ?? [], rules.publicBaseUrl);
  const metadata = metadataInput(body, null, isPublic);
  return store.create(orgId, {
    ...shape,
    ...metadata,
    name: body.client_name,
    scopes,
    resources: unique(body.resources ?? []),
    ...logoutMembers(body),
    ...(body.access_token_duration != null ? { accessTokenDuration: body.access_token_duration } : {}),
    ...(body.refresh_token_duration != null ? { refreshTokenDuration: body.refresh_token_duration } : {}),
  });
}

/** Applies a validated PATCH body: members left out are kept; null durations return to the default. */
export function patchClient(
  store: ClientStore,
  row: ClientRow,
  body: v.InferOutput<typeof ClientPatchSchema>,
  rules: ClientRuleContext,
): Promise<ClientRow> {
  if (body.resources !== undefined) checkResources(body.resources, rules.publicBaseUrl);
  const grantTypes = body.grant_types === undefined ? undefined : unique(body.grant_types);
  const redirectUris = body.redirect_uris === undefined ? undefined : unique(body.redirect_uris);
  checkClientShape(
    {
      public: row.public,
      grantTypes: grantTypes ?? row.grantTypes,
      redirectUris: redirectUris ?? row.redirectUris,
    },
    'the client after this change',
  );
  const scopes = scopesOf(body);
  const metadata = metadataInput(body, row, row.public);
  return store.update(row, {
    ...metadata,
    ...(body.client_name !== undefined ? { name: body.client_name } : {}),
    ...(grantTypes !== undefined ? { grantTypes } : {}),
    ...(redirectUris !== undefined ? { redirectUris } : {}),
    ...(scopes !== undefined ? { scopes } : {}),
    ...(body.resources !== undefined ? { resources: unique(body.resources) } : {}),
    ...logoutMembers(body),
    ...(body.access_token_duration !== undefined ? { accessTokenDuration: body.access_token_duration } : {}),
    ...(body.refresh_token_duration !== undefined
      ? { refreshTokenDuration: body.refresh_token_duration }
      : {}),
  });
}

/** The sign-in session and logout members given (create and PATCH): left out, they are not set. */
function logoutMembers(
  body: Pick<
    v.InferOutput<typeof ClientPatchSchema>,
    | 'post_logout_redirect_uris'
    | 'backchannel_logout_uri'
    | 'backchannel_logout_session_required'
    | 'first_party'
    | 'organization_issuer'
  >,
): ClientInput {
  return {
    ...(body.post_logout_redirect_uris !== undefined
      ? { postLogoutRedirectUris: unique(body.post_logout_redirect_uris) }
      : {}),
    ...(body.backchannel_logout_uri !== undefined
      ? { backchannelLogoutUri: body.backchannel_logout_uri }
      : {}),
    ...(body.backchannel_logout_session_required !== undefined
      ? { backchannelLogoutSessionRequired: body.backchannel_logout_session_required }
      : {}),
    ...(body.first_party !== undefined ? { firstParty: body.first_party } : {}),
    ...(body.organization_issuer !== undefined ? { organizationIssuer: body.organization_issuer } : {}),
  };
}
