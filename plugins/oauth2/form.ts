import { OAuthError } from '../../core/capabilities/oauth2-server.ts';

const FORM = 'application/x-www-form-urlencoded';

/** A parameter name as echoed in a message: at most 64 characters. */
const shown = (s: string) => JSON.stringify(s.length > 64 ? `${s.slice(0, 64)}…` : s);

/**
 * Reads an OAuth request's form body (RFC 6749 §3.2, RFC 7009, RFC 7662): only
 * application/x-www-form-urlencoded; a parameter given twice is refused (§3.2: "MUST NOT be included
 * more than once"), and one given without a value counts as omitted (§3.1).
 */
export async function readForm(request: Request): Promise<Map<string, string>> {
  const type = request.headers.get('content-type');
  const media = type === null ? '' : type.split(';', 1)[0]!.trim().toLowerCase();
  if (media !== FORM)
    throw new OAuthError(
      'invalid_request',
      `the request body must be ${FORM}${type === null ? ' (no Content-Type was sent)' : ` (got ${shown(media)})`}`,
    );
  const params = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(await request.text())) {
    if (params.has(name))
      throw new OAuthError('invalid_request', `parameter ${shown(name)} is given more than once`);
    params.set(name, value);
  }
  for (const [name, value] of params) if (value === '') params.delete(name);
  return params;
}
