import type { OAuth2Server, OAuthClient } from '../../../core/capabilities/oauth2-server.ts';
import type { TokenIssuer, VerifiedIdToken } from '../../../core/capabilities/token-issuer.ts';
import { quoted } from '../../../core/text.ts';
import { AuthorizeErrors } from '../errors.ts';

/** The parameters of RP-Initiated Logout 1.0 §2 this endpoint reads, with their length limits. */
const LIMITS = {
  id_token_hint: 16_384,
  client_id: 256,
  post_logout_redirect_uri: 2000,
  state: 2000,
  ui_locales: 200,
  // The confirmation form's own field.
  csrf_token: 64,
} as const;

type Name = keyof typeof LIMITS;

/** A logout request whose parameters were checked. */
export interface LogoutRequest {
  /** The ID token the client sent, verified: whose sign-in it was, for which client. */
  hint?: VerifiedIdToken;
  /** The client named by client_id, else by the hint's aud (absent when it was deleted since). */
  client?: OAuthClient;
  /**
   * The organization whose session ends: the hint's, else the client's. Absent (no hint, no client_id):
   * every organization this browser is signed in to.
   */
  orgId?: string;
  /** post_logout_redirect_uri, one of the client's registered ones exactly. */
  redirect?: string;
  state?: string;
}

const refuse = (message: string) => AuthorizeErrors.INVALID_LOGOUT_REQUEST(message);

/** Each parameter given at most once and within its length; an empty one counts as absent. */
export function logoutParams(params: URLSearchParams): Partial<Record<Name, string>> {
  const out: Partial<Record<Name, string>> = {};
  for (const name of Object.keys(LIMITS) as Name[]) {
    const all = params.getAll(name);
    if (all.length > 1) throw refuse(`${name} must be given at most once`);
    const value = all[0];
    if (value === undefined || value === '') continue;
    if (value.length > LIMITS[name]) throw refuse(`${name} must be at most ${LIMITS[name]} characters`);
    out[name] = value;
  }
  return out;
}

/**
 * Checks a logout request (RP-Initiated Logout 1.0 §2, §3): `id_token_hint` must be an ID token this
 * deployment issued (expired ones too); `client_id`, given with it, must be its audience;
 * `post_logout_redirect_uri` must be exactly one of the client's `post_logout_redirect_uris`, so it needs
 * a client (by `client_id` or the hint). Any problem is an error page, never a redirect: the URI is not
 * trusted until it is found registered.
 */
export async function checkLogoutRequest(
  p: Partial<Record<Name, string>>,
  deps: { server: Pick<OAuth2Server, 'client'>; issuer: Pick<TokenIssuer, 'verifyIdToken'> },
): Promise<LogoutRequest> {
  const hint = p.id_token_hint === undefined ? undefined : await deps.issuer.verifyIdToken(p.id_token_hint);
  if (p.id_token_hint !== undefined && !hint)
    throw refuse('id_token_hint: not an ID token issued by this service');
  if (hint && p.client_id !== undefined && p.client_id !== hint.clientId)
    throw refuse(
      `client_id: ${quoted(p.client_id)} is not the client the id_token_hint was issued to (its aud)`,
    );
  const clientId = p.client_id ?? hint?.clientId;
  const found = clientId === undefined ? undefined : await deps.server.client(clientId);
  // A client of another organization than the hint's is no client of this logout.
  const client = found && (!hint || found.orgId === hint.orgId) ? found : undefined;
  if (p.client_id !== undefined && !client)
    throw refuse(`client_id: no OAuth 2.0 client ${quoted(p.client_id)}`);
  let redirect: string | undefined;
  if (p.post_logout_redirect_uri !== undefined) {
    if (!client)
      throw refuse(
        hint
          ? 'post_logout_redirect_uri: the client the id_token_hint was issued to no longer exists'
          : 'post_logout_redirect_uri needs client_id or id_token_hint, to find the client that registered it',
      );
    if (!client.postLogoutRedirectUris.includes(p.post_logout_redirect_uri))
      throw refuse(
        `post_logout_redirect_uri: ${quoted(p.post_logout_redirect_uri)} is not one of the post_logout_redirect_uris of client ${quoted(client.clientId)} (compared exactly)`,
      );
    redirect = p.post_logout_redirect_uri;
  }
  const orgId = hint?.orgId ?? client?.orgId;
  return {
    ...(hint ? { hint } : {}),
    ...(client ? { client } : {}),
    ...(orgId ? { orgId } : {}),
    ...(redirect ? { redirect } : {}),
    ...(p.state !== undefined ? { state: p.state } : {}),
  };
}

/** Where the browser goes after the logout: the registered URI with `state` added to its query. */
export function redirectAfter(req: LogoutRequest): string | undefined {
  if (!req.redirect) return undefined;
  const url = new URL(req.redirect);
  if (req.state !== undefined) url.searchParams.append('state', req.state);
  return url.href;
}
