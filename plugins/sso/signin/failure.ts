import type { PersonRecord } from '../../../core/capabilities/person-directory.ts';
import type { EventPublisher } from '../../../core/events/types.ts';
import { analyticsMetadata, type RequestContext } from '../../../core/http/sign-in-context.ts';

/** A failed sign-in the application hears of (`error` in the fragment) and the organization's events record. */
export class SignInFailure extends Error {
  constructor(
    readonly reason: string,
    readonly error: 'access_denied' | 'server_error' | 'invalid_request',
    message: string,
    readonly person?: PersonRecord,
    /** The methods that had succeeded when it failed (the provider's, before the token was refused). */
    readonly authenticated?: string[],
  ) {
    super(message);
  }
}

/** An error of a sign-in step as a failure: itself when it is one, else a server_error with `reason`. */
export const asFailure = (e: unknown, reason = 'sign_in_error') =>
  e instanceof SignInFailure
    ? e
    : new SignInFailure(reason, 'server_error', e instanceof Error ? e.message : String(e));

/** Publishes AuthenticationFailed_v1 (method oidc) for a failed sign-in. */
export const reportFailure = (events: EventPublisher, orgId: string, f: SignInFailure, rc: RequestContext) =>
  // Source Cloud: no browser_metadata, which the spec gives this event only "when from the SDK".
  events.publish(orgId, 'AuthenticationFailed_v1', {
    analytics_metadata: analyticsMetadata(rc.analytics),
    // person_id, region and authenticated_methods "only if previously authenticated" (spec): together.
    ...(f.person && f.authenticated
      ? { person_id: f.person.personId, region: f.person.region, authenticated_methods: f.authenticated }
      : {}),
    failed_authn_method: 'oidc',
    failure_reason: f.reason,
    failure_detail: f.message,
  });
