import type { HostedLoginEmailCodes } from '../../../core/capabilities/hosted-login-email-codes.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import type { LoginAnswer } from './answer.ts';
import type { SecondStep } from './second-step.ts';

/** Where the second step's "Email me a code" posts. */
export const SECOND_STEP_EMAIL_PATH = '/oauth2/authorize/second-factor/email';

/**
 * POST /oauth2/authorize/second-factor/email: sends the code of otp_via_email to the person waiting for
 * their second step (in the browser that signed in), then the page with its code field; the code goes
 * to POST /oauth2/authorize/second-factor with its challenge_id.
 */
export async function sendSecondStepEmail(
  deps: { secondStep: SecondStep; emailCodes: () => HostedLoginEmailCodes | undefined },
  form: { csrfToken: string },
  browserHash: string | undefined,
  rc: RequestContext,
): Promise<LoginAnswer> {
  const waiting = await deps.secondStep.waiting(form, browserHash);
  if (!waiting.ok) return waiting.answer;
  const { login, pending, client, methods } = waiting;
  const again = (status: number, error: string) =>
    deps.secondStep.page(status, login, client, form.csrfToken, methods, error);
  const codes = deps.emailCodes();
  if (!codes || !methods.includes('otp_via_email'))
    return again(403, 'A code by email is not offered for this sign-in.');
  const sent = await codes.sendSecondFactor(login.orgId, pending.personId, rc);
  if (sent.ok)
    return deps.secondStep.page(200, login, client, form.csrfToken, methods, undefined, sent.challengeId);
  if (sent.reason === 'rate_limited')
    return {
      ...(await again(429, `Too many codes asked for. Try again in ${sent.retryAfter} seconds.`)),
      headers: { 'retry-after': String(sent.retryAfter) },
    };
  return again(400, 'No code could be sent by email. Choose another way.');
}
