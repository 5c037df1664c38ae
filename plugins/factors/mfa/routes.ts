import { Elysia } from 'elysia';
import * as v from 'valibot';
import { SECOND_FACTORS } from '../../../core/factors/policy.ts';
import { consistentWrite } from '../../../core/http/consistency.ts';
import { errorResponses, ok, resultOf, writeErrorResponses } from '../../../core/http/envelope.ts';
import { refuseArrayBody } from '../../../core/http/object-body.ts';
import { consistencyHeaders, routeDetail } from '../../../core/http/openapi-docs.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import type { createSecondStep } from './second-step.ts';

const MfaBody = v.looseObject({
  mfa_token: v.pipe(
    v.string('must be a string'),
    v.minLength(1, 'must not be empty'),
    v.maxLength(256, 'must be at most 256 characters'),
    v.description('The mfa_token the first factor answered.'),
  ),
  method: v.pipe(
    v.picklist(SECOND_FACTORS, `must be one of ${SECOND_FACTORS.join(', ')}`),
    v.description(
      "The second factor; the body's other members are that factor's (code, challenge_id, response).",
    ),
  ),
});

const SignedIn = resultOf(v.object({ token: v.string(), person_id: v.string() }));

/** POST /authenticate/mfa. */
export function mfaRoutes(
  ctx: ServiceContext,
  deps: { complete: ReturnType<typeof createSecondStep>; readContext: (r: Request) => RequestContext },
) {
  const detail = routeDetail(['Authentication factors'], [{ orgId: [] }]);
  return new Elysia().use(ctx.auth).post(
    '/authenticate/mfa',
    async ({ org, body, request }) => {
      const rc = deps.readContext(request);
      const { mfa_token, method, ...input } = body;
      return ok(
        await consistentWrite(request, ctx.headers, () =>
          deps.complete(org.id, { mfaToken: mfa_token, method, input }, rc),
        ),
      );
    },
    {
      orgOnly: true,
      parse: 'json',
      transform: refuseArrayBody,
      body: MfaBody,
      headers: consistencyHeaders(ctx.headers),
      response: { 200: SignedIn, ...errorResponses, ...writeErrorResponses },
      detail: detail(
        'AuthenticateMfa',
        'Complete a sign-in with its second factor',
        'End-user facing: `Service-OrgID` only. After a first factor answered `{person_id, mfa_required: true, mfa_token, methods}`: `{mfa_token, method: totp, code}`, `{mfa_token, method: otp_via_email, challenge_id, code}` (the code from POST /authenticate/mfa/email) or `{mfa_token, method: webauthn, challenge_id, response}`. 200 `{token, person_id}` with every factor in authenticated_methods. The mfa_token is single use and short-lived; 401 for one that is unknown, of another organization, expired, used or void after too many failures, and for a second factor that does not check; 400 for a method the sign-in does not offer; 429 with Retry-After past the per-token or per-address limit.',
      ),
    },
  );
}
