import { Elysia } from 'elysia';
import * as v from 'valibot';
import { consistentWrite } from '../../../core/http/consistency.ts';
import { errorResponses, ok, resultOf, writeErrorResponses } from '../../../core/http/envelope.ts';
import { refuseArrayBody } from '../../../core/http/object-body.ts';
import { consistencyHeaders, routeDetail } from '../../../core/http/openapi-docs.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import { CONSENT_LEVELS, ConsentLevelsSchema, type GdprConsent, parsePersonId } from '../levels.ts';
import type { ConsentStore } from '../store/consents.ts';

const PATH = '/persons/:person_id/consent/gdpr';
const Consents = resultOf(
  v.object({
    consents: v.array(
      v.object({
        consent_level: v.picklist(CONSENT_LEVELS),
        created_at: v.pipe(v.string(), v.description('RFC 3339: when the person first gave this level')),
      }),
    ),
  }),
);
const PersonIdParams = v.object({ person_id: v.string() });
const answer = (consents: GdprConsent[]) => ok({ consents });

/** GET, PUT, DELETE /persons/{person_id}/consent/gdpr. */
export function consentRoutes(ctx: ServiceContext, store: ConsentStore) {
  const headers = consistencyHeaders(ctx.headers);
  const detail = routeDetail(['Persons']);
  return new Elysia()
    .use(ctx.auth)
    .get(PATH, async ({ org, params }) => answer(await store.get(org.id, parsePersonId(params.person_id))), {
      apiKey: true,
      params: PersonIdParams,
      response: { 200: Consents, ...errorResponses },
      detail: detail(
        'GetPersonsPersonIdConsentGdpr',
        "A person's GDPR consents",
        `The levels the person consents to, in the order ${CONSENT_LEVELS.join(', ')}, each with when it was first given.`,
      ),
    })
    .put(
      PATH,
      async ({ org, params, body, request }) => {
        const id = parsePersonId(params.person_id);
        return answer(
          await consistentWrite(request, ctx.headers, () => store.set(org.id, id, body.consent_levels)),
        );
      },
      {
        apiKey: true,
        params: PersonIdParams,
        parse: 'json',
        transform: refuseArrayBody,
        body: ConsentLevelsSchema,
        headers,
        response: { 200: Consents, ...errorResponses, ...writeErrorResponses },
        detail: detail(
          'PutPersonsPersonIdConsentGdpr',
          "Replace a person's GDPR consents",
          'The person consents to exactly these levels afterwards (duplicates ignored; "none" only alone). Levels held already keep their created_at. Emits GdprConsentsChanged_v1 with the new and old consents when they change; tokens issued afterwards carry the levels under gdpr_consent_level.',
        ),
      },
    )
    .delete(
      PATH,
      async ({ org, params, request }) => {
        const id = parsePersonId(params.person_id);
        return answer(await consistentWrite(request, ctx.headers, () => store.clear(org.id, id)));
      },
      {
        apiKey: true,
        params: PersonIdParams,
        headers,
        response: { 200: Consents, ...errorResponses, ...writeErrorResponses },
        detail: detail(
          'DeletePersonsPersonIdConsentGdpr',
          "Delete a person's GDPR consents",
          'Forgets every level (the answer lists none). Emits GdprConsentsChanged_v1 when the person held any; tokens issued afterwards carry no gdpr_consent_level.',
        ),
      },
    );
}
