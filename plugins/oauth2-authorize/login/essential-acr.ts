import { acrOf, acrSatisfies } from '../../../core/tokens/authentication-context.ts';
import type { ClaimsRequest } from '../authorize/oidc-params.ts';

/**
 * Why a sign-in by these factors cannot answer a request whose `claims` parameter asks for `acr` as
 * essential with a value or values (OpenID Connect Core §5.5.1.1: not met, it is a failed
 * authentication, not a token with another acr); undefined when it can, or when nothing such is asked.
 */
export function essentialAcrUnmet(
  claims: ClaimsRequest | undefined,
  methods: readonly string[],
): string | undefined {
  const ask = claims?.id_token?.acr;
  if (!ask?.essential) return undefined;
  const wanted = ask.values ?? (ask.value !== undefined ? [ask.value] : []);
  if (wanted.length === 0) return undefined;
  const met = acrOf(methods);
  if (wanted.some((w) => acrSatisfies(met, w))) return undefined;
  return `the sign-in (${met}) does not meet the essential acr asked for: ${wanted.join(' ')} (OpenID Connect Core section 5.5.1.1)`;
}
