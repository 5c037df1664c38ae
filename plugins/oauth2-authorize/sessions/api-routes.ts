import { Elysia } from 'elysia';
import * as v from 'valibot';
import type { PersonDirectory } from '../../../core/capabilities/person-directory.ts';
import { CoreErrors } from '../../../core/errors.ts';
import { consistentWrite } from '../../../core/http/consistency.ts';
import { errorResponses, ok, resultOf } from '../../../core/http/envelope.ts';
import {
  consistencyHeaders,
  errorDoc,
  routeDetail,
  writeErrorDocs,
} from '../../../core/http/openapi-docs.ts';
import { analyticsReader } from '../../../core/http/sign-in-context.ts';
import { isUuid } from '../../../core/ids.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import { AuthorizeErrors } from '../errors.ts';
import type { SessionEnding } from './end.ts';
import type { SessionStore, SignInSession } from './store.ts';

const iso = (ms: number) => new Date(ms).toISOString();

/** A session as the API answers it. */
function sessionJson(s: SignInSession & { clients: string[] }) {
  return {
    session_id: s.sessionId,
    created_at: iso(s.createdAt),
    last_active_at: iso(s.lastSeenAt),
    // idleExpiresAt is never past the absolute end: the earlier of the two.
    expires_at: iso(s.idleExpiresAt),
    auth_time: iso(s.authTime * 1000),
    authenticated_methods: s.factors.map((f) => f.method),
    clients: s.clients,
    ...(s.userAgent !== undefined ? { user_agent: s.userAgent } : {}),
    ...(s.ipAddress !== undefined ? { ip_address: s.ipAddress } : {}),
  };
}

const time = (what: string) => v.pipe(v.string(), v.description(`RFC 3339: ${what}`));
const SessionSchema = v.object({
  session_id: v.pipe(v.string(), v.description('The `sid` of its ID tokens and logout tokens')),
  created_at: time('the sign-in that started it'),
  last_active_at: time('the last authorization it answered, to the minute'),
  expires_at: time('when it ends unless used: the earlier of its idle and absolute ends'),
  auth_time: time("the person's last authentication in it (the ID tokens' auth_time)"),
  authenticated_methods: v.array(v.string()),
  clients: v.pipe(v.array(v.string()), v.description('The client IDs it signed in to')),
  user_agent: v.optional(v.string()),
  ip_address: v.optional(v.string()),
});

const PersonParams = v.object({ person_id: v.string() });
const SessionParams = v.object({ person_id: v.string(), session_id: v.string() });

const uuidParam = (name: string, value: string) => {
  if (!isUuid(value))
    throw CoreErrors.VALIDATION(`path parameter ${name} must be a UUID (got ${JSON.stringify(value)})`);
  return value.toLowerCase();
};

const common = {
  400: errorDoc('person_id or session_id is not a UUID, or a bad consistency header'),
  401: errorDoc('No API key, or not a valid one'),
  403: errorDoc('A key of another organization'),
};

/**
 * GET /persons/{person_id}/sessions, DELETE /persons/{person_id}/sessions[/{session_id}]: a person's
 * live sign-in sessions of the hosted login, with the organization's API key; ending one (or all) is
 * a logout of that browser everywhere in the organization, with its events and back-channel notices.
 */
export function sessionApiRoutes(
  ctx: ServiceContext,
  deps: { sessions: SessionStore; finish: SessionEnding; directory: Pick<PersonDirectory, 'get'> },
) {
  const { sessions, finish, directory } = deps;
  const analyticsOf = analyticsReader(ctx.headers);
  const headers = consistencyHeaders(ctx.headers);
  const detail = routeDetail(['Persons']);
  const personOf = async (orgId: string, raw: string) => {
    const personId = uuidParam('person_id', raw);
    const person = await directory.get(orgId, personId);
    if (!person) throw AuthorizeErrors.SESSION_PERSON_NOT_FOUND(personId);
    return personId;
  };

  return new Elysia()
    .use(ctx.auth)
    .get(
      '/persons/:person_id/sessions',
      async ({ org, params }) => {
        const personId = await personOf(org.id, params.person_id);
        return ok((await sessions.list(org.id, personId)).map(sessionJson));
      },
      {
        apiKey: true,
        params: PersonParams,
        response: { 200: resultOf(v.array(SessionSchema)), ...errorResponses },
        detail: detail(
          'GetPersonsPersonIdSessions',
          "A person's sign-in sessions",
          'The live sessions of the hosted login (one per browser that signed in and has not logged out), newest first: when each began and was last used, when it ends unless used again (the earlier of OAUTH2_SESSION_IDLE_SECONDS after its last use and OAUTH2_SESSION_MAX_SECONDS after the sign-in), auth_time and authenticated_methods of its last authentication, the clients it signed in to, and the user agent and address of the sign-in. 404 for a person this organization does not have.',
        ),
      },
    )
    .delete(
      '/persons/:person_id/sessions/:session_id',
      async ({ org, params, request, set }) => {
        const personId = await personOf(org.id, params.person_id);
        const sessionId = uuidParam('session_id', params.session_id);
        // Only a live session of this person: another person's, or one past its lifetime, is a 404.
        const session = await sessions.get(org.id, sessionId);
        if (session?.personId !== personId) throw AuthorizeErrors.SESSION_NOT_FOUND(sessionId);
        await consistentWrite(request, ctx.headers, () =>
          ctx.storage.transaction(async (tx) => {
            const ended = await sessions.end(org.id, sessionId, tx);
            if (!ended) throw AuthorizeErrors.SESSION_NOT_FOUND(sessionId);
            await finish([ended], { tx, request: { analytics: analyticsOf(request) } });
          }),
        );
        set.status = 204;
      },
      {
        apiKey: true,
        params: SessionParams,
        headers,
        detail: {
          ...detail(
            'DeletePersonsPersonIdSessionsSessionId',
            "End one of a person's sign-in sessions",
            "Logs that browser out of the organization: its next authorization request shows the login page. Emits PersonLoggedOut_v1 and sends a Back-Channel Logout token to each client the session signed in to that registered a backchannel_logout_uri. Tokens already issued stay valid until they expire or are revoked. 404 for a person this organization does not have, or a session that is not one of the person's live sessions.",
          ),
          responses: {
            204: { description: 'The session ended' },
            ...common,
            404: errorDoc('No such person, or no such live session of the person'),
            ...writeErrorDocs,
          },
        },
      },
    )
    .delete(
      '/persons/:person_id/sessions',
      async ({ org, params, request, set }) => {
        const personId = await personOf(org.id, params.person_id);
        await consistentWrite(request, ctx.headers, () =>
          ctx.storage.transaction(async (tx) =>
            finish(await sessions.endAll(org.id, personId, tx), {
              tx,
              request: { analytics: analyticsOf(request) },
            }),
          ),
        );
        set.status = 204;
      },
      {
        apiKey: true,
        params: PersonParams,
        headers,
        detail: {
          ...detail(
            'DeletePersonsPersonIdSessions',
            "End all of a person's sign-in sessions",
            'Logs the person out of the hosted login in every browser: PersonLoggedOut_v1 for each session, and Back-Channel Logout tokens to the clients each signed in to that registered a backchannel_logout_uri. 204 also when there was none. 404 for a person this organization does not have.',
          ),
          responses: {
            204: { description: 'Every session of the person ended' },
            ...common,
            404: errorDoc('No such person in this organization'),
            ...writeErrorDocs,
          },
        },
      },
    );
}
