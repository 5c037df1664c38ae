import type { PersonDirectory, PersonRecord } from '../../../core/capabilities/person-directory.ts';
import type { CompletedSignIn, SignInCompletion } from '../../../core/capabilities/sign-in-completion.ts';
import type { TokenIssuer } from '../../../core/capabilities/token-issuer.ts';
import type { Hooks } from '../../../core/contract/hooks.ts';
import { ServiceError } from '../../../core/errors.ts';
import type { AuthenticationPolicy, SecondFactor } from '../../../core/factors/policy.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import type { TokenAuthentication } from '../../../core/tokens/before-token-issued.ts';
import { credentialsOf } from '../credentials/list.ts';
import { FactorsErrors } from '../errors.ts';
import type { PolicyStore } from '../policy/store.ts';
import type { SignInEvents } from './events.ts';
import type { MfaTokens } from './tokens.ts';

export interface CompletionDeps {
  policies: PolicyStore;
  directory: PersonDirectory;
  issuer: TokenIssuer;
  hooks: Hooks;
  tokens: MfaTokens;
  events: SignInEvents;
}

/**
 * The second factors a person can complete a sign-in with under `policy`: those the policy counts of
 * which the person enrolled a credential (listed by its plugin with `secondFactor`); under `required`,
 * also a code by email to a person with an email address, which needs no enrolment.
 */
async function secondFactorsOf(
  deps: CompletionDeps,
  policy: AuthenticationPolicy,
  person: Pick<PersonRecord, 'orgId' | 'personId' | 'handles'>,
): Promise<SecondFactor[]> {
  if (policy.secondFactor === 'off') return [];
  const enrolled = new Set(
    (await credentialsOf(deps.hooks, person.orgId, person.personId))
      .filter((c) => c.secondFactor)
      .map((c) => c.type),
  );
  const byEmail =
    policy.secondFactor === 'required' && person.handles.some((h) => h.type === 'email_address');
  return policy.secondFactors.filter((m) => enrolled.has(m) || (m === 'otp_via_email' && byEmail));
}

/**
 * The signInCompletion capability and the end of POST /authenticate/mfa: issues the token (with every
 * factor in authenticated_methods) once the policy's factors are done, or starts the second step.
 */
export function createCompletion(deps: CompletionDeps) {
  const { policies, directory, issuer, tokens, events } = deps;

  /** Issues the token for the factors done, and reports the sign-in either way. */
  async function issue(
    orgId: string,
    person: PersonRecord,
    done: TokenAuthentication[],
    rc: RequestContext,
    prevAnonymousPersonId: string | undefined,
  ): Promise<{ token: string; person_id: string }> {
    const methods = done.map((a) => a.method);
    let token: string;
    try {
      token = (
        await issuer.issue({
          orgId,
          personId: person.personId,
          methods,
          issuer: 'authentication',
          authentications: done,
          ...(prevAnonymousPersonId ? { prevAnonymousPersonId } : {}),
          request: rc.analytics,
        })
      ).token;
    } catch (error) {
      const blocked = error instanceof ServiceError && error.status === 403;
      await events.failed(orgId, rc, {
        method: methods.at(-1) ?? 'unknown',
        reason: blocked ? 'token_blocked' : 'token_not_issued',
        detail: error instanceof Error ? error.message : 'the token could not be issued',
        person,
        done,
      });
      throw error;
    }
    await events.succeeded(orgId, rc, person, done);
    return { token, person_id: person.personId };
  }

  const completion: SignInCompletion = {
    async allows(orgId, method) {
      return (await policies.get(orgId)).firstFactors.some((f) => f === method);
    },

    async secondStep(orgId, personId) {
      const policy = await policies.get(orgId);
      const person = await directory.get(orgId, personId);
      const methods = person ? await secondFactorsOf(deps, policy, person) : [];
      // Under `required` a second step is always asked: a person with none enrolled is asked every
      // factor the policy counts and cannot complete it, rather than let in with the first alone.
      return methods.length === 0 && policy.secondFactor === 'required' ? [...policy.secondFactors] : methods;
    },

    async afterFirstFactor({
      orgId,
      person,
      authentication,
      rc,
      prevAnonymousPersonId,
    }): Promise<CompletedSignIn> {
      const policy = await policies.get(orgId);
      // The second step takes another factor than the first: a passkey does not complete its own sign-in.
      const methods = (await secondFactorsOf(deps, policy, person)).filter(
        (m) => m !== authentication.method,
      );
      if (methods.length === 0) {
        if (policy.secondFactor === 'required') {
          const offered = policy.secondFactors.filter((m) => m !== authentication.method).join(', ');
          await events.failed(orgId, rc, {
            method: authentication.method,
            reason: 'second_factor_not_enrolled',
            detail: `the policy requires a second factor (one of ${offered}) and the person has none`,
            person,
            done: [authentication],
          });
          throw FactorsErrors.SECOND_FACTOR_NOT_ENROLLED(offered);
        }
        return {
          kind: 'token',
          ...(await issue(orgId, person, [authentication], rc, prevAnonymousPersonId)),
        };
      }
      const { token } = await tokens.create({
        orgId,
        personId: person.personId,
        authentication,
        methods,
        ...(prevAnonymousPersonId ? { prevAnonymousPersonId } : {}),
      });
      return { kind: 'mfa_required', person_id: person.personId, mfa_token: token, methods };
    },

    async pending(orgId, mfaToken) {
      const step = await tokens.find(orgId, mfaToken);
      return step ? { personId: step.personId, methods: step.methods } : undefined;
    },
  };

  return { completion, issue };
}

export type Completion = ReturnType<typeof createCompletion>;
