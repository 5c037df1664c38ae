import { type Jwks, publicJwkOf } from '../ports/signer.ts';
import { etagOfText } from './etag.ts';

/** A key set as served: its JSON body and a strong ETag of that body. */
export interface RenderedJwks {
  body: string;
  etag: string;
}

/**
 * Renders key sets for serving with a strong ETag, each key's members in one fixed order. The Signer hands back the same Jwks object while its
 * cache holds, so the body and its digest are computed once per key set, not per request.
 *
 * @example
 * const render = jwksRenderer();
 * const { body, etag } = await render(await ctx.signer.jwks(orgId));
 */
export function jwksRenderer(): (jwks: Jwks) => Promise<RenderedJwks> {
  const rendered = new WeakMap<Jwks, Promise<RenderedJwks>>();
  return (jwks) => {
    let r = rendered.get(jwks);
    if (!r) {
      r = (async () => {
        // Canonical: the same keys give the same bytes whichever replica made or loaded them.
        const body = JSON.stringify({ keys: jwks.keys.map(publicJwkOf) });
        return { body, etag: await etagOfText(body) };
      })();
      rendered.set(jwks, r);
    }
    return r;
  };
}
