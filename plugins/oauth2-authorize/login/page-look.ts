// How the hosted login looks for one client: its hosted-UI configuration (validated when written, by
// the oauth2 plugin) read into the few things the page shows. Values are checked again here where a
// bad one could do harm (a URL the CSP names, the colour in a stylesheet): a row written by other
// means is then ignored, never trusted.
import {
  HOSTED_HANDLE_TYPES,
  type HostedHandleType,
  type OAuthClientUiConfiguration,
} from '../../../core/capabilities/oauth2-server.ts';
import { isCssColor } from '../../../core/http/css-color.ts';
import { escapeHtml, type PageSources, styleSourceOf } from '../../../core/http/hosted-page.ts';

/** The keys of textOverrides the page uses; others are stored and unused. `{name}`: the provider. */
export const TEXT_KEYS = ['handle_label', 'password_label', 'submit', 'sso_button', 'help_link'] as const;
export type TextKey = (typeof TEXT_KEYS)[number];

const NAMES: Record<HostedHandleType, string> = {
  email_address: 'email address',
  phone_number: 'phone number',
  username: 'username',
};

/** "Email address, phone number or username", naming only `types`. */
export function handleLabel(types: readonly HostedHandleType[]): string {
  const names = types.map((t) => NAMES[t]);
  const said = names.length > 1 ? `${names.slice(0, -1).join(', ')} or ${names.at(-1)}` : (names[0] ?? '');
  return said.charAt(0).toUpperCase() + said.slice(1);
}

/** What the page shows for a client. */
export interface PageLook {
  title: string;
  texts: Record<TextKey, string>;
  handleTypes: readonly HostedHandleType[];
  logoUrl?: string;
  faviconUrl?: string;
  supportUrl?: string;
  background?: string;
}

/** An http(s) URL and its origin, or undefined for anything else. */
function webUrl(value: string | undefined): { href: string; origin: string } | undefined {
  if (value === undefined || !URL.canParse(value)) return undefined;
  const url = new URL(value);
  return url.protocol === 'https:' || url.protocol === 'http:'
    ? { href: value, origin: url.origin }
    : undefined;
}

/** The handle types the client's page takes: its handleTypes, else all. */
export function handleTypesOf(ui: OAuthClientUiConfiguration | undefined): readonly HostedHandleType[] {
  const set = new Set(ui?.handleTypes ?? []);
  const types = HOSTED_HANDLE_TYPES.filter((t) => set.has(t));
  return types.length ? types : HOSTED_HANDLE_TYPES;
}

/** The page's look for a client named `clientName` with this configuration ({} or none: the defaults). */
export function lookOf(ui: OAuthClientUiConfiguration | undefined, clientName: string): PageLook {
  const handleTypes = handleTypesOf(ui);
  const overrides = ui?.textOverrides ?? {};
  const text = (key: TextKey, fallback: string) => {
    const given = overrides[key];
    return typeof given === 'string' && given.trim() ? given : fallback;
  };
  return {
    title: ui?.pageTitle || `Sign in to ${clientName}`,
    handleTypes,
    texts: {
      handle_label: text('handle_label', handleLabel(handleTypes)),
      password_label: text('password_label', 'Password'),
      submit: text('submit', 'Sign in'),
      sso_button: text('sso_button', 'Sign in with {name}'),
      help_link: text('help_link', 'Get help'),
    },
    ...(webUrl(ui?.logoUrl) ? { logoUrl: ui?.logoUrl } : {}),
    ...(webUrl(ui?.faviconUrl) ? { faviconUrl: ui?.faviconUrl } : {}),
    ...(webUrl(ui?.supportURL) ? { supportUrl: ui?.supportURL } : {}),
    ...(ui?.pageBackgroundColor && isCssColor(ui.pageBackgroundColor)
      ? { background: ui.pageBackgroundColor }
      : {}),
  };
}

/**
 * The page's head additions (the favicon, the background's stylesheet) and what the CSP must then
 * allow: that stylesheet by its hash, the logo's and the favicon's origins in img-src, nothing more.
 */
export async function headOf(look: PageLook): Promise<{ head: string; sources: PageSources }> {
  const images = [webUrl(look.logoUrl)?.origin, webUrl(look.faviconUrl)?.origin].filter(
    (o): o is string => o !== undefined,
  );
  const css = look.background ? `body{background:${look.background}}` : undefined;
  const head =
    (look.faviconUrl ? `\n<link rel="icon" href="${escapeHtml(look.faviconUrl)}">` : '') +
    (css ? `\n<style>${css}</style>` : '');
  return { head, sources: { images, styles: css ? [await styleSourceOf(css)] : [] } };
}
