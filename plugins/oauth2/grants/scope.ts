import type { OAuthClient } from '../../../core/capabilities/oauth2-server.ts';
import { SCOPE_TOKEN } from '../schema.ts';

/** The scopes of a `scope` parameter, in order, without repeats; undefined when one breaks RFC 6749's syntax. */
export function parseScope(text: string): string[] | undefined {
  const tokens = text.split(' ').filter((s) => s !== '');
  if (!tokens.every((s) => SCOPE_TOKEN.test(s))) return undefined;
  return [...new Set(tokens)];
}

/** The scope of the login the client may still have: one an administrator removed since is not granted. */
export const stillAllowedScope = (scope: readonly string[], client: Pick<OAuthClient, 'scopes'>): string[] =>
  scope.filter((s) => client.scopes.includes(s));
