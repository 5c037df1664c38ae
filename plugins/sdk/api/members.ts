import { CoreErrors } from '../../../core/errors.ts';
import type { SubmittedEvent } from '../../../core/events/ingest.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import { SdkErrors } from '../errors.ts';
import { type TokenPerson, unauthorized } from './person-token.ts';

const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);

/**
 * The SDK's `analytics_metadata` and `browser_metadata` completed from the request: the client's own
 * members win, except the client address, which is the one the service saw (a client's claim is never
 * believed, as for X-Forwarded-For) unless it saw none. A member sent as something other than an object
 * is left as it is, for the catalogue's schema to refuse with its path.
 */
export function withRequestMetadata(
  members: Record<string, unknown>,
  rc: RequestContext,
): Record<string, unknown> {
  const out = { ...members };
  const analytics = members.analytics_metadata ?? {};
  if (isObject(analytics))
    out.analytics_metadata = {
      ...analytics,
      analytics_correlation_id: analytics.analytics_correlation_id ?? rc.analytics.correlationId,
      client_ip_address: rc.clientIp ?? analytics.client_ip_address ?? '0.0.0.0',
    };
  const browser = members.browser_metadata ?? {};
  if (isObject(browser))
    out.browser_metadata = {
      ...browser,
      user_agent: browser.user_agent ?? rc.browser.user_agent,
      window_location: browser.window_location ?? rc.browser.window_location,
      service_sdk_version: browser.service_sdk_version ?? rc.browser.service_sdk_version,
    };
  return out;
}

const takesPerson = (s: SubmittedEvent) => s.definition.members.some((m) => m.name === 'person_id');
const needsPerson = (s: SubmittedEvent) =>
  s.definition.members.some((m) => m.name === 'person_id' && !m.optional);

/**
 * `person_id` and `region` of an SDK event, from the bearer token's person: only that person may be
 * named (403 for another, 400 for another region), and an event that names a person, or must
 * (PersonIdentified_v1), needs the token (401). Events without those members are left alone, for the
 * schema to refuse a person_id they do not take.
 */
export function withTokenPerson(
  s: SubmittedEvent,
  members: Record<string, unknown>,
  who: TokenPerson | undefined,
): Record<string, unknown> {
  if (!takesPerson(s)) return members;
  const { person_id, region } = members;
  if (!who) {
    if (needsPerson(s))
      throw unauthorized(
        `${s.at}: ${s.definition.name} needs the person's token: send Authorization: Bearer <identity token>`,
        false,
      );
    if (person_id !== undefined || region !== undefined)
      throw unauthorized(
        `${s.at}.${person_id !== undefined ? 'person_id' : 'region'}: names a person, which needs the person's token: send Authorization: Bearer <identity token>`,
        false,
      );
    return members;
  }
  const { person } = who;
  if (person_id !== undefined && person_id !== person.personId)
    throw SdkErrors.PERSON_MISMATCH(
      `${s.at}.person_id: must be the person of the bearer token (${person.personId}), or left out`,
    );
  if (region !== undefined && region !== person.region)
    throw CoreErrors.VALIDATION(
      `${s.at}.region: must be the region of the token's person (${person.region}), or left out`,
    );
  return { ...members, person_id: person.personId, region: person.region };
}
