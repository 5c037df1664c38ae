import type { HostedLoginPasskeys } from '../../../core/capabilities/hosted-login-passkeys.ts';
import type { OAuth2Server } from '../../../core/capabilities/oauth2-server.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import { AuthorizeErrors } from '../errors.ts';
import { type LoginStore, requireOpenLogin } from '../store/logins.ts';
import type { createLoginAnswers, LoginAnswer } from './answer.ts';
import type { SignedIn } from './finish.ts';
import { requireLoginClient } from './require-client.ts';
import type { SessionSignIn } from './session-sign-in.ts';

export interface PasskeySignInDeps {
  server: OAuth2Server;
  logins: LoginStore;
  passkeys: () => HostedLoginPasskeys | undefined;
  answers: ReturnType<typeof createLoginAnswers>;
  sessionSignIn: SessionSignIn;
}

/** The browser's JSON of a credential, or undefined when it is not JSON. */
export function credentialJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * POST /oauth2/authorize/passkey: the login page's passkey button (or autofill) answered. The passkeys
 * plugin checks the assertion; the sign-in then goes on as a password's does (the second step when the
 * policy asks for one, the session, the consent, the code), with the method `webauthn`.
 */
export function createPasskeySignIn(deps: PasskeySignInDeps) {
  const { page, answer } = deps.answers;
  return async function passkeySignIn(
    form: { csrfToken: string; challengeId: string; response: string },
    browserHash: string | undefined,
    rc: RequestContext,
  ): Promise<LoginAnswer> {
    const login = requireOpenLogin(await deps.logins.find(form.csrfToken), browserHash, {
      unknown: 'this sign-in was never started here (csrf_token names no sign-in under way)',
      otherBrowser:
        'the form was not sent by the browser that opened this sign-in (its cookie is missing or another)',
    });
    const client = await requireLoginClient(deps.server, login, answer);
    if (!('clientId' in client)) return client;
    const retry = { clientName: client.name, ui: client.ui, csrfToken: form.csrfToken };
    const passkeys = deps.passkeys();
    // Without the plugin, or under a policy that leaves passkeys out, nothing is checked.
    if (!passkeys || !(await passkeys.allowsFirstFactor(login.orgId)))
      return page(403, login, { ...retry, error: 'Signing in with a passkey is not offered here.' });
    const verified = await passkeys.verifySignIn(
      login.orgId,
      form.challengeId,
      credentialJson(form.response),
      rc,
    );
    if (!verified.ok) return page(401, login, { ...retry, error: verified.message });
    // One answer finishes a login; a second (a double click, a replay) finds it used.
    if (!(await deps.logins.finish(form.csrfToken)))
      throw AuthorizeErrors.LOGIN_NOT_FOUND('this sign-in has already been completed');
    const who: SignedIn = {
      personId: verified.personId,
      method: 'webauthn',
      authentication: verified.authentication,
    };
    const signed = await deps.sessionSignIn.signedIn(login, client, who, rc);
    return signed.ok ? signed.answer : answer(login, deps.sessionSignIn.refusedByHook(login));
  };
}
