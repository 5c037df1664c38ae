import { Elysia } from 'elysia';
import * as v from 'valibot';
import type { OAuth2Server } from '../../../core/capabilities/oauth2-server.ts';
import type { PersonDirectory } from '../../../core/capabilities/person-directory.ts';
import { consistentWrite } from '../../../core/http/consistency.ts';
import { errorResponses, ok, resultOf } from '../../../core/http/envelope.ts';
import {
  consistencyHeaders,
  errorDoc,
  routeDetail,
  writeErrorDocs,
} from '../../../core/http/openapi-docs.ts';
import { isUuid } from '../../../core/ids.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import { AuthorizeErrors } from '../errors.ts';
import type { OAuth2ConsentRevoker } from './revoke.ts';
import type { OAuth2ConsentStore } from './store.ts';

const PATH = '/persons/:person_id/oauth2-consents';
const PersonParams = v.object({ person_id: v.string() });
const PersonClientParams = v.object({ person_id: v.string(), client_id: v.string() });

const ConsentSchema = v.object({
  client_id: v.string(),
  client_name: v.pipe(v.string(), v.description("The client's name, as its consent page showed it")),
  scopes: v.pipe(v.array(v.string()), v.description('The scopes the person allowed the client, sorted')),
  created_at: v.pipe(v.string(), v.description('RFC 3339: when the person first allowed the client')),
  updated_at: v.pipe(v.string(), v.description('RFC 3339: when the person last allowed it (scopes added)')),
});

const deleted = (what: string, missing: string) => ({
  204: { description: `No content: ${what}` },
  400: errorDoc('A person_id that is not a UUID, a client_id too long, or a bad consistency header'),
  401: errorDoc('No API key, or not a valid one'),
  403: errorDoc('A key of another organization'),
  404: errorDoc(missing),
  ...writeErrorDocs,
});

const iso = (ms: number) => new Date(ms).toISOString();

/** A person ID from the path: 400 when it cannot be one (so no query runs with it). */
function personIdOf(id: string): string {
  if (!isUuid(id))
    throw AuthorizeErrors.INVALID_CONSENT_REQUEST(
      `path parameter person_id must be a UUID (got ${JSON.stringify(id.slice(0, 100))})`,
    );
  return id.toLowerCase();
}

function clientIdOf(id: string): string {
  if (id.length < 1 || id.length > 256)
    throw AuthorizeErrors.INVALID_CONSENT_REQUEST('path parameter client_id must be 1 to 256 characters');
  return id;
}

/**
 * GET, DELETE /persons/{person_id}/oauth2-consents and DELETE /persons/{person_id}/oauth2-consents/{client_id}:
 * what a person allowed third-party clients (first_party false) on the hosted consent page, and its
 * withdrawal, with the organization's API key.
 */
export function oauth2ConsentRoutes(
  ctx: ServiceContext,
  deps: {
    consents: OAuth2ConsentStore;
    revoke: OAuth2ConsentRevoker;
    directory: PersonDirectory;
    server: OAuth2Server;
  },
) {
  const headers = consistencyHeaders(ctx.headers);
  const detail = routeDetail(['Persons']);
  /** The person, of this organization: another organization's is as unknown as one never made. */
  const personOf = async (orgId: string, raw: string) => {
    const personId = personIdOf(raw);
    if (!(await deps.directory.get(orgId, personId)))
      throw AuthorizeErrors.CONSENT_PERSON_NOT_FOUND(personId);
    return personId;
  };

  return new Elysia()
    .use(ctx.auth)
    .get(
      PATH,
      async ({ org, params }) => {
        const personId = await personOf(org.id, params.person_id);
        const listed = [];
        for (const consent of await deps.consents.list(org.id, personId)) {
          // A client deleted since (or, by any means, not this organization's) is no longer listed.
          const client = await deps.server.client(consent.clientId);
          if (!client || client.orgId !== org.id) continue;
          listed.push({
            client_id: consent.clientId,
            client_name: client.name,
            scopes: consent.scopes,
            created_at: iso(consent.createdAt),
            updated_at: iso(consent.updatedAt),
          });
        }
        return ok(listed);
      },
      {
        apiKey: true,
        params: PersonParams,
        response: { 200: resultOf(v.array(ConsentSchema)), ...errorResponses },
        detail: detail(
          'GetPersonsPersonIdOauth2Consents',
          "A person's OAuth 2.0 consents",
          "The clients with first_party false the person allowed on the hosted login's consent page, each with the scopes allowed (the union of every answer), oldest first. A client deleted since is not listed. 404 for a person this organization does not have.",
        ),
      },
    )
    .delete(
      PATH,
      async ({ org, params, request, set }) => {
        const personId = await personOf(org.id, params.person_id);
        await consistentWrite(request, ctx.headers, () => deps.revoke(org.id, personId));
        set.status = 204;
      },
      {
        apiKey: true,
        params: PersonParams,
        headers,
        detail: {
          ...detail(
            'DeletePersonsPersonIdOauth2Consents',
            "Revoke a person's OAuth 2.0 consents",
            "Forgets every consent the person gave (204 also when there was none), and revokes, in the same transaction, every grant the person holds for those clients: their refresh tokens answer invalid_grant and the access tokens issued in them are revoked. The client's next authorization shows the consent page again; with prompt=none it answers consent_required.",
          ),
          responses: deleted("the person's consents are revoked", 'No such person in this organization'),
        },
      },
    )
    .delete(
      `${PATH}/:client_id`,
      async ({ org, params, request, set }) => {
        const personId = await personOf(org.id, params.person_id);
        const clientId = clientIdOf(params.client_id);
        const gone = await consistentWrite(request, ctx.headers, () =>
          deps.revoke(org.id, personId, clientId),
        );
        if (gone.length === 0) throw AuthorizeErrors.CONSENT_NOT_FOUND(clientId);
        set.status = 204;
      },
      {
        apiKey: true,
        params: PersonClientParams,
        headers,
        detail: {
          ...detail(
            'DeletePersonsPersonIdOauth2ConsentsClientId',
            "Revoke a person's OAuth 2.0 consent to a client",
            "Forgets the consent the person gave the client, and revokes, in the same transaction, every grant the person holds for it: its refresh tokens answer invalid_grant and the access tokens issued in them are revoked. The client's next authorization shows the consent page again; with prompt=none it answers consent_required. 404 for a person this organization does not have, or no consent of the person to that client.",
          ),
          responses: deleted(
            'the consent and the grants that came with it are revoked',
            'No such person in this organization, or no consent of the person to that client',
          ),
        },
      },
    );
}
