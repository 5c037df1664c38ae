import type { OAuthErrorCode } from '../../../core/capabilities/oauth2-server.ts';

/** OpenID Connect Core §3.1.2.1's prompt values. */
export type Prompt = 'none' | 'login' | 'consent' | 'select_account';
const PROMPTS: ReadonlySet<string> = new Set(['none', 'login', 'consent', 'select_account']);

/** One member of the `claims` parameter (OIDC Core §5.5.1): null, or what is asked of it. */
export interface ClaimAsk {
  essential?: boolean;
  value?: string;
  values?: string[];
}

/** The `claims` parameter as checked: the members asked for in the ID token and at userinfo. */
export interface ClaimsRequest {
  id_token?: Record<string, ClaimAsk | null>;
  userinfo?: Record<string, ClaimAsk | null>;
}

/** The OpenID Connect parameters of an authorization request beyond OAuth's, checked. */
export interface OidcParams {
  prompt: Set<Prompt>;
  /** Seconds: a sign-in older than this is asked again (`auth_time` is then in the ID token). */
  maxAge: number | undefined;
  idTokenHint: string | undefined;
  acrValues: string[] | undefined;
  claims: ClaimsRequest | undefined;
  responseMode: 'query' | 'form_post';
}

export type OidcChecked =
  | { ok: true; params: OidcParams }
  | { ok: false; error: OAuthErrorCode; description: string };

const MAX = { idTokenHint: 8192, acrValues: 1024, claims: 4096, uiLocales: 256 } as const;

const refuse = (description: string, error: OAuthErrorCode = 'invalid_request'): OidcChecked => ({
  ok: false,
  error,
  description,
});

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** One member of `claims.id_token` or `claims.userinfo`, or why not. */
function claimAsk(where: string, name: string, ask: unknown): ClaimAsk | null | string {
  if (ask === null) return null;
  if (!isObject(ask)) return `claims.${where}.${name} must be null or an object`;
  const out: ClaimAsk = {};
  for (const [key, value] of Object.entries(ask)) {
    if (key === 'essential') {
      if (typeof value !== 'boolean') return `claims.${where}.${name}.essential must be true or false`;
      out.essential = value;
    } else if (key === 'value') {
      if (typeof value !== 'string') return `claims.${where}.${name}.value must be a string`;
      out.value = value;
    } else if (key === 'values') {
      if (!Array.isArray(value) || !value.every((x) => typeof x === 'string'))
        return `claims.${where}.${name}.values must be an array of strings`;
      out.values = value;
    }
    // Other members are extensions this service does not know: ignored, as §5.5.1 says.
  }
  return out;
}

/** The `claims` parameter (OIDC Core §5.5): a JSON object with `id_token` and `userinfo` members. */
export function parseClaims(raw: string): ClaimsRequest | string {
  if (raw.length > MAX.claims) return `claims must be at most ${MAX.claims} characters`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return 'claims must be a JSON object (OpenID Connect Core section 5.5)';
  }
  if (!isObject(parsed)) return 'claims must be a JSON object (OpenID Connect Core section 5.5)';
  const out: ClaimsRequest = {};
  for (const where of ['id_token', 'userinfo'] as const) {
    const members = parsed[where];
    if (members === undefined) continue;
    if (!isObject(members)) return `claims.${where} must be a JSON object of claim names`;
    const asked: Record<string, ClaimAsk | null> = {};
    for (const [name, ask] of Object.entries(members)) {
      const checked = claimAsk(where, name, ask);
      if (typeof checked === 'string') return checked;
      asked[name] = checked;
    }
    out[where] = asked;
  }
  return out;
}

/**
 * Checks the OpenID Connect parameters of an authorization request: `prompt`, `max_age`,
 * `id_token_hint`, `acr_values`, `claims`, `ui_locales` (accepted, not used: the pages have one
 * language) and `response_mode`. The caller has checked each is given at most once.
 */
export function checkOidcParams(params: URLSearchParams): OidcChecked {
  const responseMode = params.get('response_mode') ?? 'query';
  if (responseMode !== 'query' && responseMode !== 'form_post')
    return refuse('response_mode must be query or form_post');

  const prompt = new Set<Prompt>();
  for (const value of (params.get('prompt') ?? '').split(' ').filter(Boolean)) {
    if (!PROMPTS.has(value))
      return refuse(`prompt: ${value} is not one of none, login, consent, select_account`);
    prompt.add(value as Prompt);
  }
  // OpenID Connect Core §3.1.2.1: none with any other value is an error of the request itself.
  if (prompt.has('none') && prompt.size > 1)
    return refuse('prompt: none may not be combined with other values');

  const rawMaxAge = params.get('max_age');
  let maxAge: number | undefined;
  if (rawMaxAge !== null) {
    if (!/^[0-9]{1,10}$/.test(rawMaxAge)) return refuse('max_age must be a number of seconds (0 or more)');
    maxAge = Number(rawMaxAge);
  }

  const idTokenHint = params.get('id_token_hint') || undefined;
  if (idTokenHint !== undefined && idTokenHint.length > MAX.idTokenHint)
    return refuse(`id_token_hint must be at most ${MAX.idTokenHint} characters`);

  const rawAcr = params.get('acr_values');
  if (rawAcr !== null && rawAcr.length > MAX.acrValues)
    return refuse(`acr_values must be at most ${MAX.acrValues} characters`);
  const acrValues = rawAcr?.split(' ').filter(Boolean);

  const uiLocales = params.get('ui_locales');
  if (uiLocales !== null && uiLocales.length > MAX.uiLocales)
    return refuse(`ui_locales must be at most ${MAX.uiLocales} characters`);

  const rawClaims = params.get('claims');
  let claims: ClaimsRequest | undefined;
  if (rawClaims !== null && rawClaims !== '') {
    const parsed = parseClaims(rawClaims);
    if (typeof parsed === 'string') return refuse(parsed);
    claims = parsed;
  }

  return {
    ok: true,
    params: {
      prompt,
      maxAge,
      idTokenHint,
      acrValues: acrValues?.length ? acrValues : undefined,
      claims,
      responseMode,
    },
  };
}
