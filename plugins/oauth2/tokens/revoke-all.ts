import { OAuthError } from '../../../core/capabilities/oauth2-server.ts';
import { isRfc3339 } from '../../../core/events/formats.ts';
import { isUuid } from '../../../core/ids.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import { quoted as shown } from '../../../core/text.ts';
import { type EndpointDeps, oauthEndpoint } from './endpoint.ts';
import { emptyAnswer } from './responses.ts';

/** The form's person_id and until (milliseconds since the epoch; absent: now), or invalid_request naming which. */
function revokeAllParams(params: Map<string, string>, clock: Clock): { personId: string; until: number } {
  const personId = params.get('person_id');
  if (personId === undefined) throw new OAuthError('invalid_request', 'person_id is required');
  if (!isUuid(personId))
    throw new OAuthError('invalid_request', `person_id must be a UUID (got ${shown(personId)})`);
  const sent = params.get('until');
  if (sent === undefined) return { personId: personId.toLowerCase(), until: clock.now() };
  const until = isRfc3339(sent) ? Date.parse(sent) : Number.NaN;
  if (Number.isNaN(until))
    throw new OAuthError(
      'invalid_request',
      `until must be an RFC 3339 date-time such as 2024-05-01T12:00:00Z (got ${shown(sent)})`,
    );
  return { personId: personId.toLowerCase(), until };
}

/**
 * POST /oauth2/tokens/revoke-all: revokes every grant this client holds for the person begun at or
 * before `until` (default now): their refresh tokens stop working and the access tokens issued in them
 * stop being active. A person this client holds nothing for (unknown, of another organization) answers
 * 200 and changes nothing, as revocation of an unknown token does (RFC 7009 §2.2). Public clients are
 * refused: with client_id alone, anybody could end any person's sessions with them.
 */
export function revokeAllEndpoint(deps: EndpointDeps, clock: Clock) {
  return oauthEndpoint(deps, async (client, params) => {
    if (client.type === 'public')
      throw new OAuthError(
        'invalid_client',
        `client ${client.clientId} is public: revoke-all needs a client that authenticates with a secret`,
        401,
      );
    const { personId, until } = revokeAllParams(params, clock);
    for (const store of deps.registry.tokenStores) await store.revokeAll?.(client, personId, until);
    return emptyAnswer();
  });
}
