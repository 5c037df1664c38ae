import { createResourceVerifier, ResourceVerificationError } from 'identity-service/resource';

export interface ApiOptions {
  /** The identity service's PUBLIC_BASE_URL. */
  issuer: string;
  /** The organization whose tokens the API takes. */
  orgId: string;
  /** The API's resource indicator, listed in its clients' `resources`. */
  resource: string;
  /** Where this API is reached, for the metadata URL in its challenges. */
  publicUrl: string;
}

/**
 * A small API: its protected resource metadata at the well-known path (RFC 9728), and `GET /whoami`,
 * which needs the `read` scope and answers who the token is for.
 */
export function resourceApi(o: ApiOptions): (request: Request) => Promise<Response> {
  const verifier = createResourceVerifier({
    issuer: o.issuer,
    orgId: o.orgId,
    resource: o.resource,
    scopesSupported: ['read'],
  });
  const metadataUrl = `${o.publicUrl}/.well-known/oauth-protected-resource`;
  return async (request) => {
    const { pathname } = new URL(request.url);
    if (pathname === '/.well-known/oauth-protected-resource') return verifier.metadataResponse();
    if (pathname !== '/whoami') return Response.json({ error: 'not_found' }, { status: 404 });
    try {
      const { claims } = await verifier.verify(request, { scopes: ['read'] });
      return Response.json({ sub: claims.sub, client_id: claims.client_id, scope: claims.scope });
    } catch (e) {
      if (e instanceof ResourceVerificationError) return verifier.refusal(e, metadataUrl);
      throw e;
    }
  };
}
