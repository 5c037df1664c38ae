import { OAuthError } from '../../../core/capabilities/oauth2-server.ts';
import { quoted as shown } from '../../../core/text.ts';
import { ONE_RESOURCE } from '../../../core/tokens/audience.ts';

const FORM = 'application/x-www-form-urlencoded';

/** A parameter name as echoed in a message: at most 64 characters. */

/**
 * Reads an OAuth request's form body (RFC 6749 §3.2, RFC 7009, RFC 7662) from its text: only
 * application/x-www-form-urlencoded; a parameter given twice is refused (§3.2: "MUST NOT be included
 * more than once"), and one given without a value counts as omitted (§3.1).
 */
export function readForm(request: Request, body: string): Map<string, string> {
  const type = request.headers.get('content-type');
  const media = type === null ? '' : type.split(';', 1)[0]!.trim().toLowerCase();
  if (media !== FORM)
    throw new OAuthError(
      'invalid_request',
      `the request body must be ${FORM}${type === null ? ' (no Content-Type was sent)' : ` (got ${shown(media)})`}`,
    );
  const params = new Map<string, string>();
  for (const [name, value] of pairsOf(body)) {
    if (params.has(name))
      throw name === 'resource'
        ? // RFC 8707 §2 allows several; a server unwilling to issue one token for them all says so.
          new OAuthError('invalid_target', ONE_RESOURCE)
        : new OAuthError('invalid_request', `parameter ${shown(name)} is given more than once`);
    params.set(name, value);
  }
  for (const [name, value] of params) if (value === '') params.delete(name);
  return params;
}

/** Characters that make a form need the full decoder: percent-escapes and `+` for a space. */
const ENCODED = /[%+]/;

/**
 * The name-value pairs of a form, as the WHATWG URL standard parses application/x-www-form-urlencoded.
 * A body with nothing encoded (grant_type=client_credentials&scope=read) is split directly, which is
 * what the standard's parser does for it; anything else goes through URLSearchParams.
 */
function pairsOf(body: string): Iterable<[string, string]> {
  if (ENCODED.test(body)) return new URLSearchParams(body);
  const pairs: [string, string][] = [];
  for (const part of body.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    pairs.push(eq < 0 ? [part, ''] : [part.slice(0, eq), part.slice(eq + 1)]);
  }
  return pairs;
}
