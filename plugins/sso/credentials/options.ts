import * as v from 'valibot';
import type { SsoProvider } from '../../../core/sso/define-provider.ts';
import { SsoErrors } from '../errors.ts';

/** A credential's options as stored: the public part in a column, the write-only part sealed. */
export interface CheckedOptions {
  /** null: the provider's defaults. */
  authorizeScopes: string[] | null;
  options: Record<string, unknown>;
  /** The provider's write-only options; null when it declares none. */
  secrets: Record<string, unknown> | null;
}

const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);

const SCOPE = /^[\x21\x23-\x5b\x5d-\x7e]{1,200}$/;

function checkScopes(field: string, scopes: unknown): string[] | null {
  if (scopes === null) return null;
  const rule = `${field}: must be an array of at most 50 scopes, each 1 to 200 visible ASCII characters without spaces, quotes or backslashes`;
  if (!Array.isArray(scopes) || scopes.length > 50) throw SsoErrors.INVALID_OPTIONS(rule);
  for (const s of scopes)
    if (typeof s !== 'string' || !SCOPE.test(s))
      throw SsoErrors.INVALID_OPTIONS(`${rule} (got ${JSON.stringify(s)})`);
  return [...new Set(scopes as string[])];
}

/**
 * Checks `options` of a create or a PATCH for the credential's provider; every refusal names the option
 * (`options.okta.organization_url: must be an https URL ...`). Options of another provider are refused:
 * a credential has one provider, and silently dropping them would hide a mistake.
 *
 * `stored` is the credential's current options (PATCH): absent `options` keeps them; a given
 * `options.<provider>` replaces them, except write-only options left out, which are kept.
 */
export async function checkOptions(
  provider: SsoProvider,
  registered: readonly string[],
  given: unknown,
  stored?: CheckedOptions,
): Promise<CheckedOptions | undefined> {
  if (given === undefined && stored) return undefined;
  if (given !== undefined && !isObject(given))
    throw SsoErrors.INVALID_OPTIONS(
      `options: must be an object with one member per provider (here: ${provider.id})`,
    );
  for (const key of Object.keys(given ?? {}))
    if (key !== provider.id)
      throw SsoErrors.INVALID_OPTIONS(
        registered.includes(key)
          ? `options.${key}: options of ${key}, but this credential's provider is ${provider.id}; only options.${provider.id} applies`
          : `options.${key}: ${JSON.stringify(key)} is not a provider of this deployment (accepted: ${provider.id} for this credential)`,
      );
  const own = (given as Record<string, unknown> | undefined)?.[provider.id];
  if (own === undefined && stored) return undefined;
  if (own !== undefined && !isObject(own))
    throw SsoErrors.INVALID_OPTIONS(`options.${provider.id}: must be an object`);
  const { authorize_scopes, ...rest } = own ?? {};
  const authorizeScopes =
    authorize_scopes === undefined
      ? null
      : checkScopes(`options.${provider.id}.authorize_scopes`, authorize_scopes);
  const secretKeys = provider.secretOptions ?? [];
  for (const key of secretKeys)
    if (rest[key] === undefined && stored?.secrets?.[key] !== undefined) rest[key] = stored.secrets[key];
  const parsed = v.safeParse(provider.options, rest);
  if (!parsed.success)
    throw SsoErrors.INVALID_OPTIONS(
      parsed.issues
        .map((issue) => {
          const path = v.getDotPath(issue);
          return `options.${provider.id}${path ? `.${path}` : ''}: ${issue.message}`;
        })
        .join('; '),
    );
  const problem = await provider.checkOptions?.(parsed.output);
  if (problem) throw SsoErrors.INVALID_OPTIONS(problem);
  const output: Record<string, unknown> = isObject(parsed.output) ? { ...parsed.output } : {};
  const secrets: Record<string, unknown> = {};
  for (const key of secretKeys) {
    if (key in output) secrets[key] = output[key];
    delete output[key];
  }
  return { authorizeScopes, options: output, secrets: secretKeys.length ? secrets : null };
}
