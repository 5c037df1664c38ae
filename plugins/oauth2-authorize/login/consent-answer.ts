import type { OAuth2Server } from '../../../core/capabilities/oauth2-server.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import { consentScopes } from '../consent/step.ts';
import type { OAuth2ConsentStore } from '../consent/store.ts';
import { AuthorizeErrors } from '../errors.ts';
import { digest } from '../store/digest.ts';
import { type LoginStore, requireOpenLogin } from '../store/logins.ts';
import type { AnswerTarget, LoginAnswer } from './answer.ts';
import { requireLoginClient } from './require-client.ts';
import type { SessionSignIn } from './session-sign-in.ts';

export interface ConsentAnswerDeps {
  server: OAuth2Server;
  logins: LoginStore;
  consents: OAuth2ConsentStore;
  sessionSignIn: SessionSignIn;
  answer: (to: AnswerTarget, params: Record<string, string | undefined>) => LoginAnswer;
}

/**
 * POST /oauth2/authorize/consent: the person's answer on the consent page. It must come from the browser
 * holding the session the page was asked in (the form's login is bound to that session's cookie), once.
 * Allow remembers the scopes for the person and client, then answers the client with a code; deny
 * answers access_denied.
 */
export function createConsentAnswer(deps: ConsentAnswerDeps) {
  const { logins, answer } = deps;
  return async function consentAnswer(
    form: { csrfToken: string; decision: 'allow' | 'deny' },
    sessionSecretOf: (orgId: string) => string | undefined,
    rc: RequestContext,
  ): Promise<LoginAnswer> {
    const found = await logins.find(form.csrfToken);
    const secret = found.kind === 'open' ? sessionSecretOf(found.login.orgId) : undefined;
    const login = requireOpenLogin(found, secret && (await digest(secret)), {
      unknown: 'this consent was never asked here (csrf_token names no sign-in under way)',
      otherBrowser:
        'the answer was not sent by the browser signed in when it was asked (its session cookie is missing or another)',
    });
    const session = await deps.sessionSignIn.live(login.orgId, secret);
    if (!session || session.sessionId !== login.sessionId)
      throw AuthorizeErrors.LOGIN_FORBIDDEN(
        'the sign-in session this consent was asked in has ended: start again from the application',
      );
    const client = await requireLoginClient(deps.server, login, answer);
    if (!('clientId' in client)) return client;
    // One answer per page: a second (a double click, a replay) finds it used.
    if (!(await logins.finish(form.csrfToken)))
      throw AuthorizeErrors.LOGIN_NOT_FOUND('this consent has already been answered');
    if (form.decision === 'deny')
      return answer(login, {
        error: 'access_denied',
        error_description: `the person did not allow ${client.name} access`,
        state: login.state,
      });
    await deps.consents.grant(login.orgId, session.personId, client.clientId, consentScopes(login, client));
    return deps.sessionSignIn.silent(login, client, session, rc);
  };
}
