import { eventHandleOf, type PersonRecord } from '../../../core/capabilities/person-directory.ts';
import type { EventPublisher } from '../../../core/events/types.ts';
import { analyticsMetadata, type RequestContext } from '../../../core/http/sign-in-context.ts';
import type { TokenAuthentication } from '../../../core/tokens/before-token-issued.ts';

/** The sign-in events of the factors plugin: a step that failed, a sign-in that completed. */
export function signInEvents(events: EventPublisher) {
  return {
    /**
     * AuthenticationFailed_v1 for `method`. `done` are the factors that had succeeded (the first one, when
     * the second fails): then the person is named, as the spec says "only if previously authenticated".
     */
    failed(
      orgId: string,
      rc: RequestContext,
      f: {
        method: string;
        reason: string;
        detail: string;
        person?: PersonRecord;
        done?: TokenAuthentication[];
      },
    ) {
      const handle = f.done?.[0] ? eventHandleOf(f.done[0].handle) : undefined;
      return events.publish(orgId, 'AuthenticationFailed_v1', {
        analytics_metadata: analyticsMetadata(rc.analytics),
        ...(f.person && f.done?.length
          ? {
              person_id: f.person.personId,
              region: f.person.region,
              authenticated_methods: f.done.map((a) => a.method),
            }
          : {}),
        failed_authn_method: f.method,
        failure_reason: f.reason,
        failure_detail: f.detail,
        ...(handle ? { handle } : {}),
      });
    },
    /** AuthenticationSucceeded_v1 once every factor is done: the last one is the success's method. */
    succeeded(orgId: string, rc: RequestContext, person: PersonRecord, done: TokenAuthentication[]) {
      const handle = done[0] ? eventHandleOf(done[0].handle) : undefined;
      return events.publish(orgId, 'AuthenticationSucceeded_v1', {
        analytics_metadata: analyticsMetadata(rc.analytics),
        browser_metadata: rc.browser,
        person_id: person.personId,
        region: person.region,
        success_authn_method: done.at(-1)?.method ?? 'unknown',
        authenticated_methods: done.map((a) => a.method),
        ...(handle ? { handle } : {}),
      });
    },
  };
}

export type SignInEvents = ReturnType<typeof signInEvents>;
