import { Elysia } from 'elysia';
import { consistentWrite } from '../../../core/http/consistency.ts';
import { errorResponses, ok, resultOf, writeErrorResponses } from '../../../core/http/envelope.ts';
import { refuseArrayBody } from '../../../core/http/object-body.ts';
import { consistencyHeaders, routeDetail } from '../../../core/http/openapi-docs.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import { PolicyAnswer, PolicyBody, policyAnswer, storedPolicyOf } from './body.ts';
import type { PolicyStore } from './store.ts';

const PATH = '/organizations/authentication-policy';
const DESCRIPTION =
  "Which first factors sign the organization's persons in, whether a second factor is off, optional (asked of persons who enrolled one) or required, which second factors count, and the WebAuthn relying party its passkeys belong to (rp_id, rp_name, origins; the public base URL's host and origin unless set). Read at each sign-in: a change holds from the next one, and /token/validate answers not_enough_factors for a token issued with fewer factors than a required second step asks. An organization that never set one allows every first factor and asks no second.";

/** GET, PUT /organizations/authentication-policy. */
export function policyRoutes(ctx: ServiceContext, store: PolicyStore) {
  const detail = routeDetail(['Authentication factors']);
  return new Elysia()
    .use(ctx.auth)
    .get(PATH, async ({ org }) => ok(policyAnswer(await store.get(org.id))), {
      apiKey: true,
      response: { 200: resultOf(PolicyAnswer), ...errorResponses },
      detail: detail(
        'GetOrganizationsAuthenticationPolicy',
        "The organization's authentication policy",
        DESCRIPTION,
      ),
    })
    .put(
      PATH,
      async ({ org, body, request }) => {
        const policy = storedPolicyOf(body);
        return ok(policyAnswer(await consistentWrite(request, ctx.headers, () => store.set(org.id, policy))));
      },
      {
        apiKey: true,
        parse: 'json',
        transform: refuseArrayBody,
        body: PolicyBody,
        headers: consistencyHeaders(ctx.headers),
        response: { 200: resultOf(PolicyAnswer), ...errorResponses, ...writeErrorResponses },
        detail: detail(
          'PutOrganizationsAuthenticationPolicy',
          "Set the organization's authentication policy",
          `${DESCRIPTION} second_factors defaults to every second factor, webauthn (absent or null) to the public base URL's relying party. 400 names the member and its rule.`,
        ),
      },
    );
}
