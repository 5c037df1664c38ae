import { OAuthError } from '../../../core/capabilities/oauth2-server.ts';
import { SCOPE_TOKEN } from '../schema.ts';

/** The rule a scope parameter breaks when it is not space-delimited scope tokens (RFC 6749 §3.3). */
export const SCOPE_LIST_RULE =
  'scope must be scope tokens separated by single spaces (visible ASCII except " and \\)';

/**
 * The scope a token request asks for (RFC 6749 §3.3), checked against what the client may have:
 * absent, the client's whole list; otherwise space-delimited scope tokens, each one of the client's.
 */
export function grantedScope(requested: string | undefined, allowed: readonly string[]): string[] {
  if (requested === undefined) return [...allowed];
  const asked = requested.split(' ');
  const granted: string[] = [];
  for (const scope of asked) {
    if (!SCOPE_TOKEN.test(scope)) throw new OAuthError('invalid_scope', SCOPE_LIST_RULE);
    if (!allowed.includes(scope))
      throw new OAuthError(
        'invalid_scope',
        `scope ${JSON.stringify(scope.length > 64 ? `${scope.slice(0, 64)}…` : scope)} is not one this client may be granted`,
      );
    if (!granted.includes(scope)) granted.push(scope);
  }
  return granted;
}
