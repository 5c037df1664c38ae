import type { SsoProvider } from '../../../core/sso/define-provider.ts';

/**
 * The scopes a sign-in requests: the configured authorize_scopes (or the provider's defaults when none
 * are configured), then every always-requested scope not already there. Order is kept, duplicates go.
 *
 * @example effectiveScopes(github, ['repo']) // ['repo', 'read:user', 'user:email']
 */
export function effectiveScopes(
  provider: Pick<SsoProvider, 'defaultScopes' | 'alwaysScopes'>,
  configured: readonly string[] | null | undefined,
): string[] {
  return [...new Set([...(configured ?? provider.defaultScopes), ...provider.alwaysScopes])];
}
