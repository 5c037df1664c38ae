import { eventHandleOf, type PersonRecord } from '../../../core/capabilities/person-directory.ts';
import type { CompletedSignIn, SignInCompletion } from '../../../core/capabilities/sign-in-completion.ts';
import type { TokenIssuer } from '../../../core/capabilities/token-issuer.ts';
import { ServiceError } from '../../../core/errors.ts';
import type { EventPublisher } from '../../../core/events/types.ts';
import { analyticsMetadata, type RequestContext } from '../../../core/http/sign-in-context.ts';
import type { TokenAuthentication } from '../../../core/tokens/before-token-issued.ts';

/**
 * The end of a passkey sign-in in a deployment without the factors plugin (no `signInCompletion`): the
 * token issued at once, as the password factor does without a policy, with AuthenticationSucceeded_v1,
 * or AuthenticationFailed_v1 when the issuer refuses (a token_minted hook blocking it).
 */
export function directCompletion(deps: {
  issuer: TokenIssuer;
  events: EventPublisher;
}): Pick<SignInCompletion, 'afterFirstFactor'> {
  const { issuer, events } = deps;
  return {
    async afterFirstFactor(o: {
      orgId: string;
      person: PersonRecord;
      authentication: TokenAuthentication;
      rc: RequestContext;
    }): Promise<CompletedSignIn> {
      const { orgId, person, authentication, rc } = o;
      const handle = eventHandleOf(authentication.handle);
      let token: string;
      try {
        ({ token } = await issuer.issue({
          orgId,
          personId: person.personId,
          methods: ['webauthn'],
          issuer: 'authentication',
          authentications: [authentication],
          request: rc.analytics,
        }));
      } catch (error) {
        const blocked = error instanceof ServiceError && error.status === 403;
        await events.publish(orgId, 'AuthenticationFailed_v1', {
          analytics_metadata: analyticsMetadata(rc.analytics),
          person_id: person.personId,
          region: person.region,
          authenticated_methods: ['webauthn'],
          failed_authn_method: 'webauthn',
          failure_reason: blocked ? 'token_blocked' : 'token_not_issued',
          failure_detail: error instanceof Error ? error.message : 'the token could not be issued',
          ...(handle ? { handle } : {}),
        });
        throw error;
      }
      await events.publish(orgId, 'AuthenticationSucceeded_v1', {
        analytics_metadata: analyticsMetadata(rc.analytics),
        browser_metadata: rc.browser,
        person_id: person.personId,
        region: person.region,
        success_authn_method: 'webauthn',
        authenticated_methods: ['webauthn'],
        ...(handle ? { handle } : {}),
      });
      return { kind: 'token', token, person_id: person.personId };
    },
  };
}
