import type { OAuthClient } from '../../../core/capabilities/oauth2-server.ts';
import { randomSecret } from '../../../core/ids.ts';
import { stillAllowedScope } from '../../oauth2/grants/index.ts';
import type { LoginPage } from '../login/answer.ts';
import type { ConsentStep } from '../login/session-sign-in.ts';
import type { LoginStore, PendingLogin } from '../store/logins.ts';
import { consentPage, consentPageHead } from './page.ts';
import type { OAuth2ConsentStore } from './store.ts';

/** The scopes a consent is asked and remembered for: those the client may still be granted. */
export const consentScopes = (login: Pick<PendingLogin, 'scope'>, client: OAuthClient) =>
  stillAllowedScope(login.scope, client);

/**
 * The consent step of the hosted login: a third-party client (first_party false) asks the person once
 * for the scopes it wants (again for more, or when the request says prompt=consent); the organization's
 * own apps never ask unless prompt=consent does. The page's form is a fresh login of the same request,
 * bound to the session's cookie: only the browser holding that session can answer it.
 */
export function createConsentStep(deps: {
  consents: OAuth2ConsentStore;
  logins: LoginStore;
  baseUrl: string;
}): ConsentStep {
  return {
    async needed(login, client, personId) {
      if (login.prompt.includes('consent')) return true;
      if (client.firstParty) return false;
      return !(await deps.consents.covers(
        login.orgId,
        personId,
        client.clientId,
        consentScopes(login, client),
      ));
    },
    async ask(login, client, session, headers): Promise<LoginPage> {
      const loginId = randomSecret('');
      await deps.logins.open(loginId, session.secret, { ...login, sessionId: session.sessionId });
      const input = {
        clientName: client.name,
        ui: client.ui,
        scopes: consentScopes(login, client),
        baseUrl: deps.baseUrl,
        csrfToken: loginId,
      };
      const { head, sources } = await consentPageHead(input);
      return {
        kind: 'page',
        status: 200,
        html: consentPage(input, head),
        // The answer redirects to the client: the CSP's form-action must allow its origin.
        formTargets: [new URL(login.redirectUri).origin],
        sources,
        headers,
      };
    },
  };
}
