import type { JsonValue, OutgoingMessage } from '../../../core/ports/event-bus.ts';

/** The bus topic of back-channel logout tokens to deliver: one message per client of an ended session. */
export const BACKCHANNEL_LOGOUT_TOPIC = 'backchannel-logout';

/**
 * A client to tell of a logout (OpenID Connect Back-Channel Logout 1.0): the session `sessionId` of
 * person `personId` ended, and client `clientId` of organization `orgId`, which registered `uri` as its
 * `backchannel_logout_uri`, gets a logout token there.
 */
export interface LogoutNotice {
  orgId: string;
  clientId: string;
  /** The client's `backchannel_logout_uri`, as registered. */
  uri: string;
  /** The logout token's `sub`: the person, as the client's ID tokens name them. */
  personId: string;
  /** The logout token's `sid`: the session, as the client's ID tokens name it (never a cookie's secret). */
  sessionId: string;
  /** The logout token's `iss`: the client's issuer; absent, the deployment's. */
  issuer?: string;
}

/** The payload on BACKCHANNEL_LOGOUT_TOPIC: the notice, and when it was queued (the retry window's start). */
export interface NoticeMessage {
  org: string;
  client: string;
  uri: string;
  person: string;
  session: string;
  /** Absent in messages queued before clients had issuers of their own: the deployment's. */
  iss?: string;
  queued_at: number;
}

/**
 * The bus message of a notice. Its id names the organization, client and session, so the same notice
 * sent twice (the logout endpoint and the session's end racing) is delivered once where the bus can tell.
 */
export function noticeMessage(n: LogoutNotice, queuedAt: number): OutgoingMessage {
  for (const name of ['orgId', 'clientId', 'uri', 'personId', 'sessionId'] as const)
    if (typeof n[name] !== 'string' || n[name] === '')
      throw new Error(`oauth2-authorize: a logout notice needs ${name} (got ${JSON.stringify(n[name])})`);
  const payload: NoticeMessage = {
    org: n.orgId,
    client: n.clientId,
    uri: n.uri,
    person: n.personId,
    session: n.sessionId,
    ...(n.issuer !== undefined ? { iss: n.issuer } : {}),
    queued_at: queuedAt,
  };
  return { id: `logout:${n.orgId}:${n.clientId}:${n.sessionId}`, payload: { ...payload } };
}

const isText = (v: JsonValue | undefined): v is string => typeof v === 'string' && v !== '';

/** The notice a message carries, or undefined for anything else (a message this service never wrote). */
export function noticeOf(payload: JsonValue): (LogoutNotice & { queuedAt: number }) | undefined {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return undefined;
  const { org, client, uri, person, session, iss, queued_at } = payload;
  if (!isText(org) || !isText(client) || !isText(uri) || !isText(person) || !isText(session))
    return undefined;
  if (typeof queued_at !== 'number' || !Number.isFinite(queued_at)) return undefined;
  if (iss !== undefined && !isText(iss)) return undefined;
  return {
    orgId: org,
    clientId: client,
    uri,
    personId: person,
    sessionId: session,
    ...(iss !== undefined ? { issuer: iss } : {}),
    queuedAt: queued_at,
  };
}

/** The host of a notice's URI, for the operator's log (the path and query may carry a client's secret). */
export function hostOf(uri: string): string {
  try {
    return new URL(uri).host;
  } catch {
    return '(not a URL)';
  }
}
