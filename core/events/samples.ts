import { uuidv7 } from '../ids.ts';
import {
  type AnalyticsMetadata,
  type BrowserMetadata,
  type HttpRequestMetadata,
  type PersonHandle,
  PersonHandleType,
  type TimingMetadata,
} from './shared-types.ts';
import type { SampleContext } from './types.ts';

// Building blocks of realistic sample payloads for test events. Addresses, phone numbers and domains come
// from the ranges reserved for documentation (RFC 5737, RFC 3849, RFC 2606, fictional 555-01xx numbers),
// so a sample never points at a real person or host.

export const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;
export const between = (lo: number, hi: number): number => lo + Math.floor(Math.random() * (hi - lo + 1));
export const randomHex = (length: number): string => {
  const bytes = crypto.getRandomValues(new Uint8Array(Math.ceil(length / 2)));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0'))
    .join('')
    .slice(0, length);
};

/** RFC 3339 UTC with milliseconds, as a client or an upstream system would send it. */
export const iso = (ms: number): string => new Date(ms).toISOString();

const FIRST = ['ada', 'grace', 'alan', 'katherine', 'linus', 'margaret', 'dennis', 'barbara', 'ken', 'radia'];
const LAST = ['lovelace', 'hopper', 'turing', 'johnson', 'torvalds', 'hamilton', 'ritchie', 'liskov'];
const DOMAINS = ['example.com', 'example.org', 'example.net'];

/** Data regions a person's data may live in. */
export const REGIONS = [
  'us-iowa',
  'europe-belgium',
  'europe-england',
  'asia-japan',
  'australia-sydney',
] as const;
export const region = (): string => pick(REGIONS);

export const email = (): string => `${pick(FIRST)}.${pick(LAST)}@${pick(DOMAINS)}`;
export const phoneNumber = (): string =>
  pick([`+12025550${between(100, 199)}`, `+447700900${String(between(0, 999)).padStart(3, '0')}`]);
export const username = (): string => `${pick(FIRST)}_${pick(LAST)}${between(1, 99)}`;

/** A handle of the given type (a random one of email, phone and username when not given). */
export function handle(type?: 1 | 2 | 3): PersonHandle {
  const t =
    type ?? pick([PersonHandleType.EmailAddress, PersonHandleType.PhoneNumber, PersonHandleType.Username]);
  const value =
    t === PersonHandleType.EmailAddress
      ? email()
      : t === PersonHandleType.PhoneNumber
        ? phoneNumber()
        : username();
  return { type: t, value };
}

/** Factor methods and the handle type each is used with; SSO methods have none. */
export const FACTORS: ReadonlyArray<{ method: string; handleType?: 1 | 2 | 3 }> = [
  { method: 'email_link', handleType: PersonHandleType.EmailAddress },
  { method: 'otp_via_email', handleType: PersonHandleType.EmailAddress },
  { method: 'otp_via_sms', handleType: PersonHandleType.PhoneNumber },
  { method: 'password', handleType: PersonHandleType.Username },
  { method: 'webauthn', handleType: PersonHandleType.EmailAddress },
  { method: 'oidc' },
  { method: 'saml' },
];

/** A factor method with its handle, absent for SSO (`oidc`, `saml`). */
export function factor(): { method: string; handle?: PersonHandle } {
  const f = pick(FACTORS);
  return f.handleType ? { method: f.method, handle: handle(f.handleType) } : { method: f.method };
}

export const GDPR_CONSENT_LEVELS = ['necessary', 'analytics', 'marketing', 'tracking'] as const;

/** One of the documentation ranges, built only once picked (a test event makes one for each sample). */
const CLIENT_IPS: ReadonlyArray<() => string> = [
  () => `192.0.2.${between(1, 254)}`,
  () => `198.51.100.${between(1, 254)}`,
  () => `203.0.113.${between(1, 254)}`,
  () => `2001:db8:${randomHex(4)}::${randomHex(3)}`,
];
export const clientIp = (): string => pick(CLIENT_IPS)();

export const USER_AGENTS = [
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
] as const;
export const userAgent = (): string => pick(USER_AGENTS);

export const analytics = (ctx: SampleContext): AnalyticsMetadata => ({
  analytics_correlation_id: ctx.analyticsCorrelationId ?? uuidv7(ctx.now),
  client_ip_address: clientIp(),
});

export const browser = (): BrowserMetadata => ({
  user_agent: userAgent(),
  window_location: pick([
    'https://app.example.com/login',
    'https://app.example.com/account/settings',
    'https://shop.example.org/checkout',
  ]),
  service_sdk_version: pick(['3.21.0', '3.22.1', '4.0.2']),
});

/** A timing that ended at `endMs` and took `elapsedMs` (milliseconds). */
export const timing = (endMs: number, elapsedMs: number = between(2, 180)): TimingMetadata => ({
  start: iso(endMs - elapsedMs),
  end: iso(endMs),
  elapsed: elapsedMs,
});

/** An HTTP exchange with a random method, URL and status, unless `fixed` gives them. */
export const httpRequest = (fixed: Partial<HttpRequestMetadata> = {}): HttpRequestMetadata => {
  const method = fixed.method ?? pick(['GET', 'GET', 'POST', 'PUT', 'DELETE']);
  return {
    method,
    url: pick(['https://api.example.com/v1/orders', 'https://api.example.com/v1/users/me']),
    status_code: pick([200, 200, 201, 204, 401, 403, 404, 502]),
    request_length: method === 'GET' || method === 'DELETE' ? 0 : between(64, 4096),
    response_length: between(0, 65536),
    ...fixed,
  };
};

/** A fresh id, time-ordered around the sample's time. */
export const id = (ctx: SampleContext): string => uuidv7(ctx.now);
