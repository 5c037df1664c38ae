// The hosted-UI configuration of a client (reference: OAuthClientUIConfiguration): the members the
// reference names are checked by type and bound; others are kept as given (the reference allows them),
// within the whole body's bound. Whatever is stored may reach the hosted login page, so the page can
// trust it: URLs are https (http on loopback) on plain host names, the colour is of a small grammar.
import * as v from 'valibot';
import { HOSTED_HANDLE_TYPES } from '../../../core/capabilities/oauth2-server.ts';
import { CoreErrors } from '../../../core/errors.ts';
import { CSS_COLOR_RULE, isCssColor } from '../../../core/http/css-color.ts';
import { isWellFormedText } from '../../../core/text.ts';
import { LOOPBACK_HOSTS } from '../schema.ts';

/** The whole configuration, as compact JSON, is at most 16 KiB of UTF-8. */
export const MAX_UI_CONFIGURATION_BYTES = 16 * 1024;
/** Entries of themeVars and of textOverrides, each. */
export const MAX_MAP_ENTRIES = 100;

/** A host name as the URL parser leaves it (lowercase, IDNs as xn--), or an IPv6 literal. */
const PLAIN_HOST = /^(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*\.?|\[[0-9a-f:.]+\])$/;

/** Why a URL of the configuration is refused, or undefined. */
export function uiUrlProblem(value: string): string | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  if (/[\s\u0000-\u001f\u007f]/.test(value)) return 'must not contain white space or control characters';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.username || url.password) return 'must not carry a user name or password';
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return `must use https (got the scheme ${url.protocol.slice(0, -1)})`;
  if (!PLAIN_HOST.test(url.hostname))
    return 'must name a host of letters, digits, dots and hyphens (an IDN in its xn-- form) or an IP address';
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname))
    return 'must use https (http only on a loopback host: 127.0.0.1, [::1] or localhost)';
  return undefined;
}

/** Postgres (text and jsonb) holds neither U+0000 nor a lone surrogate. */
const storable = (s: string) => isWellFormedText(s) && !s.includes('\u0000');
const STORABLE = 'must be well-formed Unicode without U+0000';

const text = (max: number, what: string) =>
  v.pipe(
    v.string('must be a string'),
    v.maxLength(max, `must be at most ${max} characters`),
    v.check(storable, STORABLE),
    v.description(what),
  );
const url = (what: string) =>
  v.pipe(
    v.string('must be a string'),
    v.maxLength(2000, 'must be at most 2000 characters'),
    v.check(
      (u) => uiUrlProblem(u) === undefined,
      (i) => uiUrlProblem(String(i.input)) ?? 'must be a URL',
    ),
    v.description(`${what} https, or http on a loopback host; at most 2000 characters.`),
  );
const stringMap = (valueMax: number, what: string) =>
  v.pipe(
    v.record(
      v.pipe(
        v.string(),
        v.maxLength(128, 'keys must be at most 128 characters'),
        v.check(storable, STORABLE),
      ),
      text(valueMax, 'A value'),
      'must be an object of strings',
    ),
    v.check((o) => Object.keys(o).length <= MAX_MAP_ENTRIES, `must have at most ${MAX_MAP_ENTRIES} entries`),
    v.description(`${what} At most ${MAX_MAP_ENTRIES} entries, keys 128 and values ${valueMax} characters.`),
  );
const flag = (what: string) => v.pipe(v.boolean('must be true or false'), v.description(what));

export const UiConfigurationSchema = v.objectWithRest(
  {
    pageTitle: v.optional(
      v.pipe(
        text(120, 'The hosted login\'s <title> and heading, in place of "Sign in to <client name>".'),
        v.minLength(1, 'must not be empty'),
        // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
        v.regex(/^[^\u0000-\u001f\u007f]*$/, 'must not contain control characters'),
      ),
    ),
    pageBackgroundColor: v.optional(
      v.pipe(
        v.string('must be a string'),
        v.check(isCssColor, CSS_COLOR_RULE),
        v.description(`The page's background. ${CSS_COLOR_RULE}.`),
      ),
    ),
    logoUrl: v.optional(url('An image above the form (the CSP allows its origin in img-src).')),
    faviconUrl: v.optional(url("The page's icon (the CSP allows its origin in img-src).")),
    supportURL: v.optional(url('A "Get help" link on the error states of the page.')),
    alternativeAuthURL: v.optional(url('Stored and answered; the hosted login does not use it.')),
    textOverrides: v.optional(
      stringMap(
        500,
        'Texts of the hosted login by key: handle_label, password_label, submit, sso_button ({name} is the provider), help_link. Other keys are stored but unused.',
      ),
    ),
    themeVars: v.optional(stringMap(200, 'Stored and answered; the hosted login does not use them.')),
    handleTypes: v.optional(
      v.pipe(
        v.array(
          v.picklist(HOSTED_HANDLE_TYPES, `must be one of ${HOSTED_HANDLE_TYPES.join(', ')}`),
          'must be an array of handle types',
        ),
        v.minLength(1, 'must list at least one handle type'),
        v.maxLength(10, 'must list at most 10 handle types'),
        v.description(
          'The handle types the hosted login takes (email_address, phone_number, username); absent: all. A handle of another type is refused on the page.',
        ),
      ),
    ),
    dynamicFlowEnabled: v.optional(flag('Stored and answered; the hosted login does not use it.')),
    dynamicFlowConfig: v.optional(
      v.pipe(
        v.record(v.string(), v.unknown(), 'must be a JSON object'),
        v.description('Stored and answered; the hosted login does not use it.'),
      ),
    ),
    showBadge: v.optional(flag('Stored and answered; the hosted login does not use it.')),
    storeLastFactor: v.optional(flag('Stored and answered; the hosted login does not use it.')),
  },
  v.unknown(),
  'must be a JSON object',
);

/** A member named `key` holding no object, only where the reference says object (valibot takes an array). */
const OBJECT_MEMBERS = ['textOverrides', 'themeVars', 'dynamicFlowConfig'] as const;

/** The first string or key anywhere in `value` that Postgres cannot store, by its path; or undefined. */
function unstorableAt(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return storable(value) ? undefined : path;
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, item] of Object.entries(value)) {
    const at = Array.isArray(value) ? `${path}[${key}]` : `${path}.${key}`;
    if (!Array.isArray(value) && !storable(key)) return at;
    const found = unstorableAt(item, at);
    if (found) return found;
  }
  return undefined;
}

/**
 * A route's `transform`, before validation: the body is one JSON object of at most 16 KiB, its object
 * members are objects, and nothing in it (members the reference does not name included) holds text
 * Postgres cannot store.
 */
export function refuseUnfitConfiguration({ body }: { body: unknown }): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw CoreErrors.VALIDATION('body: must be a JSON object');
  const bytes = new TextEncoder().encode(JSON.stringify(body)).length;
  if (bytes > MAX_UI_CONFIGURATION_BYTES)
    throw CoreErrors.VALIDATION(
      `body: must be at most ${MAX_UI_CONFIGURATION_BYTES} bytes as compact JSON (got ${bytes})`,
    );
  for (const key of OBJECT_MEMBERS) {
    if (Array.isArray(Reflect.get(body, key)))
      throw CoreErrors.VALIDATION(`body.${key}: must be a JSON object`);
  }
  const bad = unstorableAt(body, 'body');
  if (bad) throw CoreErrors.VALIDATION(`${bad}: ${STORABLE}`);
}
