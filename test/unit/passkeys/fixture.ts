import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import type { Env } from '../../../core/config.ts';
import { EVENTS_TOPIC, type ServiceEvent } from '../../../core/events/types.ts';
import type { ServiceDefinition } from '../../../core/plugin.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import { ack } from '../../../core/ports/event-bus.ts';
import { passkeys } from '../../../plugins/passkeys/index.ts';
import { password } from '../../../plugins/password/index.ts';
import { persons } from '../../../plugins/persons/index.ts';
import { tokens } from '../../../plugins/tokens/index.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { createPerson, identityPlugins, type MadePerson } from '../../helpers/identity-service.ts';
import { type CallOptions, startTestService } from '../../helpers/service.ts';

/**
 * The page a relying party's application would serve: it asks the API (same origin) for options, hands
 * them to `navigator.credentials.create` / `get`, and sends the answers back. Its functions are called
 * by the tests through `page.evaluate`.
 */
const PAGE = `<!doctype html><meta charset="utf-8"><title>passkeys</title><script>
window.api = async (path, body, orgId) => {
  const res = await fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [window.ORG_HEADER]: orgId ?? window.ORG_ID },
    body: JSON.stringify(body ?? {}),
  });
  return { status: res.status, text: await res.text() };
};
window.create = async (options) => {
  const c = await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options) });
  return c.toJSON();
};
window.get = async (options) => {
  const c = await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options) });
  return c.toJSON();
};
</script><p>passkeys test page</p>`;

/** A loopback server that serves the page at /page and hands every other request to the service. */
function pageServer(handle: () => (request: Request, peer?: string) => Promise<Response>) {
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (request, srv) => {
      const url = new URL(request.url);
      if (url.pathname === '/page')
        return new Response(PAGE, { headers: { 'content-type': 'text/html; charset=utf-8' } });
      return handle()(request, srv.requestIP(request)?.address);
    },
  });
  return { server, origin: `http://localhost:${server.port}` };
}

/**
 * The identity plugins (passkeys among them) on a loopback port whose `http://localhost:<port>` is the
 * PUBLIC_BASE_URL, so the default policy's relying party is `localhost` and its origin that one; a
 * second port (`otherOrigin`) serves the same page and API from an origin the policy does not list.
 */
export async function startPasskeyService(
  o: {
    env?: Env;
    clock?: Clock;
    plugins?: ServiceDefinition['plugins'];
    /** The identity plugins without the factors plugin: no policy, no second step. */
    withoutFactors?: boolean;
  } = {},
) {
  let handle: (request: Request, peer?: string) => Promise<Response> = () =>
    Promise.resolve(new Response('starting', { status: 503 }));
  const main = pageServer(() => handle);
  const other = pageServer(() => handle);
  const t = await startTestService({
    definition: {
      plugins: [
        ...(o.withoutFactors ? [persons(), tokens(), password(), passkeys()] : identityPlugins()),
        ...(o.plugins ?? []),
      ],
    },
    env: {
      PUBLIC_BASE_URL: main.origin,
      PASSWORD_ARGON2_MEMORY_KIB: '1024',
      PASSWORD_ARGON2_ITERATIONS: '1',
      PASSKEY_ADDRESS_RATE_LIMIT: '6000/1000',
      ...o.env,
    },
    ...(o.clock ? { clock: o.clock } : {}),
  });
  handle = t.service.fetchFrom;
  await t.service.start();
  const events: ServiceEvent[] = [];
  const sub = t.service.ctx.bus.consume<ServiceEvent>(EVENTS_TOPIC, async (m) => {
    events.push(m.payload);
    return ack();
  });

  /** The events of that name seen so far, waiting up to 5 s for at least `count`. */
  async function eventsNamed(name: string, count = 1): Promise<ServiceEvent[]> {
    const deadline = Date.now() + 5000;
    const pick = () => events.filter((e) => e.event_metadata.event_name === name);
    while (pick().length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return pick();
  }

  return {
    ...t,
    origin: main.origin,
    otherOrigin: other.origin,
    /** PUT /organizations/authentication-policy with this body; its answer. */
    async setPolicy(body: unknown) {
      const res = await t.call('PUT', '/organizations/authentication-policy', { body });
      await expectStatus(res, 200);
      return res.json.result;
    },
    events,
    eventsNamed,
    person: (as: CallOptions = {}): Promise<MadePerson> => createPerson(t, as),
    async stop() {
      await sub.stop();
      main.server.stop(true);
      other.server.stop(true);
      await t.stop();
    },
  };
}

export type PasskeyService = Awaited<ReturnType<typeof startPasskeyService>>;

/** What the page's fetch answers. */
export interface PageAnswer {
  status: number;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary response JSON
  json: any;
}

/**
 * A CDP virtual authenticator on the tab: CTAP2, internal (a platform authenticator), resident keys
 * and user verification, the user present and verified at once.
 */
export async function virtualAuthenticator(context: BrowserContext, page: Page) {
  const cdp: CDPSession = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return { cdp, authenticatorId };
}

/**
 * A browser tab on the test page with a CDP virtual authenticator: CTAP2, internal (a platform
 * authenticator), resident keys and user verification, the user present and verified at once.
 */
export async function openPasskeyPage(browser: Browser, t: PasskeyService, origin = t.origin) {
  const context = await browser.newContext();
  const page: Page = await context.newPage();
  const open = async (at: string) => {
    await page.goto(`${at}/page`);
    await page.evaluate(
      ([id, header]) => {
        Object.assign(window, { ORG_ID: id, ORG_HEADER: header });
      },
      [t.org.id, t.names.orgId] as const,
    );
  };
  await open(origin);
  const { cdp, authenticatorId } = await virtualAuthenticator(context, page);

  type Win = {
    api(path: string, body?: unknown, orgId?: string): Promise<{ status: number; text: string }>;
    create(options: unknown): Promise<unknown>;
    get(options: unknown): Promise<unknown>;
  };

  return {
    page,
    /** POST from the page (same origin as the page) with the organization's OrgID header only. */
    async api(path: string, body?: unknown, asOrg?: string): Promise<PageAnswer> {
      const { status, text } = await page.evaluate(
        ([p, b, org]) => (window as unknown as Win).api(p, b, org),
        [path, body, asOrg] as const,
      );
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status, text, json };
    },
    /** navigator.credentials.create with these options: the RegistrationResponseJSON. */
    // biome-ignore lint/suspicious/noExplicitAny: the browser's JSON, read by the tests
    create: (options: unknown): Promise<any> =>
      page.evaluate((opts) => (window as unknown as Win).create(opts), options),
    /** navigator.credentials.get with these options: the AuthenticationResponseJSON. */
    // biome-ignore lint/suspicious/noExplicitAny: the browser's JSON, read by the tests
    get: (options: unknown): Promise<any> =>
      page.evaluate((opts) => (window as unknown as Win).get(opts), options),
    /** Goes to the page on another origin; the virtual authenticator stays with the tab. */
    goto: open,
    /** The credentials the virtual authenticator holds, with their sign counts. */
    async credentials() {
      const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      return credentials;
    },
    close: () => context.close(),
  };
}

export type PasskeyPage = Awaited<ReturnType<typeof openPasskeyPage>>;

/** Registers a passkey for the person: options from the API (API key), created in the page, sent back. */
export async function registerPasskey(
  t: PasskeyService,
  tab: PasskeyPage,
  personId: string,
  name?: string,
): Promise<{ credential_id: string; name: string; created_at: string }> {
  const opts = await t.call('POST', `/persons/${personId}/credentials/webauthn/registration-options`);
  await expectStatus(opts, 200);
  const response = await tab.create(opts.json.result.options);
  const done = await t.call('POST', `/persons/${personId}/credentials/webauthn`, {
    body: { challenge_id: opts.json.result.challenge_id, response, ...(name ? { name } : {}) },
  });
  await expectStatus(done, 201);
  return done.json.result;
}

/** A passkey sign-in from the page: options, navigator.credentials.get, the answer; both answers. */
export async function pageSignIn(tab: PasskeyPage, body: unknown = {}) {
  const options = await tab.api('/authenticate/webauthn/options', body);
  await expectStatus(options, 200);
  const response = await tab.get(options.json.result.options);
  const answer = await tab.api('/authenticate/webauthn', {
    challenge_id: options.json.result.challenge_id,
    response,
  });
  return { options, response, answer };
}
