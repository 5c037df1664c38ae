import { personDirectory } from '../../../core/capabilities/person-directory.ts';
import { randomSecret } from '../../../core/ids.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import { sessionCookies } from '../../../plugins/oauth2-authorize/sessions/cookie.ts';
import { sessionEnding } from '../../../plugins/oauth2-authorize/sessions/end.ts';
import { createSessionStore, type SignInSession } from '../../../plugins/oauth2-authorize/sessions/store.ts';
import type { AuthorizeService } from './fixture.ts';

/** The deployment's default lifetimes (OAUTH2_SESSION_IDLE_SECONDS, OAUTH2_SESSION_MAX_SECONDS). */
export const LIFETIMES = { idleMs: 259_200_000, absoluteMs: 1_209_600_000 };

/**
 * Sign-in sessions made directly in the service's storage, as the hosted login makes them, with the
 * cookie a browser would then send: for tests of what ends sessions, apart from how they begin.
 */
export function sessionMaker(s: AuthorizeService, clock: Clock) {
  const store = createSessionStore({ storage: s.service.ctx.storage, clock, lifetimes: LIFETIMES });
  const cookies = sessionCookies({ baseUrl: s.url, maxAgeSeconds: LIFETIMES.absoluteMs / 1000 });
  const directory = s.service.ctx.capability(personDirectory);
  if (!directory) throw new Error('the service runs no persons plugin');
  return {
    store,
    cookies,
    /** What ending sessions does in the plugin: the events (no back-channel sender here). */
    finish: sessionEnding({ directory, events: s.service.ctx.events }),
    /** A session of the person (of the test organization unless `orgId`), having served `clients`. */
    async start(
      personId: string,
      o: { orgId?: string; clients?: string[]; userAgent?: string } = {},
    ): Promise<{ session: SignInSession; secret: string; cookie: string }> {
      const orgId = o.orgId ?? s.org.id;
      const secret = randomSecret('');
      const session = await store.start({
        sessionId: crypto.randomUUID(),
        secret,
        orgId,
        personId,
        factors: [
          {
            method: 'password',
            at: Math.floor(clock.now() / 1000),
            handle: { type: 'username', value: 'x' },
          },
        ],
        authTime: Math.floor(clock.now() / 1000),
        userAgent: o.userAgent ?? 'Mozilla/5.0 (test)',
        ipAddress: '192.0.2.7',
      });
      for (const clientId of o.clients ?? []) await store.served(session.sessionId, clientId);
      return { session, secret, cookie: `${cookies.nameOf(orgId)}=${secret}` };
    },
  };
}
