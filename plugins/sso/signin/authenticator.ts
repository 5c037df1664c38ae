import * as v from 'valibot';
import type { PersonRecord } from '../../../core/capabilities/person-directory.ts';
import type {
  SsoAuthenticator,
  SsoChoice,
  SsoFailed,
  SsoStoredSignIn,
} from '../../../core/capabilities/sso-authenticator.ts';
import type { SsoCredentials } from '../../../core/capabilities/sso-credentials.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { SsoProvider } from '../../../core/sso/define-provider.ts';
import type { SignInFlow } from './flow.ts';
import type { ProviderClient } from './provider-client.ts';

const describe = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * The ssoAuthenticator capability: the sign-in flow's provider round trip, bound to another surface's
 * pending request and limited to the credentials enabled for the service's authorization server.
 */
export function createSsoAuthenticator(deps: {
  credentials: SsoCredentials;
  flow: SignInFlow;
  client: ProviderClient;
  clock: Clock;
}): SsoAuthenticator {
  const { credentials, flow, client, clock } = deps;

  /**
   * The origin of the provider's authorization endpoint, from its (cached) discovery, for the page's
   * CSP. Read from the credential's public options: drawing a page opens no secret. A provider with
   * write-only options fails its schema on the public part alone; no endpoint depends on a write-only
   * option, so the stored public options (checked when written) serve as they are.
   */
  async function discoverOrigin(
    provider: SsoProvider<string, unknown>,
    stored: Readonly<Record<string, unknown>>,
  ): Promise<string | undefined> {
    const parsed = v.safeParse(provider.options, stored);
    const options = parsed.success ? parsed.output : stored;
    try {
      const server = await client.discoverServer(provider, options, clock.now());
      const endpoint = server.as.authorization_endpoint;
      return endpoint ? new URL(endpoint).origin : undefined;
    } catch {
      return undefined;
    }
  }

  return {
    async choices(orgId) {
      const listed = await credentials.list(orgId);
      const enabled = listed.filter((c) => c.enableInServiceOidcAuthzServer);
      return Promise.all(
        enabled.flatMap((c): Promise<SsoChoice>[] => {
          const provider = credentials.provider(c.provider);
          if (!provider) return [];
          return [
            discoverOrigin(provider, c.options).then((origin) => ({
              clientId: c.clientId,
              name: c.label || provider.displayName,
              provider: c.provider,
              origin,
            })),
          ];
        }),
      );
    },

    async start(orgId, clientId, bound) {
      const credential = await credentials.open(orgId, clientId);
      if (!credential?.enableInServiceOidcAuthzServer || !credentials.provider(credential.provider))
        return {
          ok: false,
          reason: 'not_enabled',
          message: `no SSO credential ${clientId} of this organization is enabled for this sign-in`,
        };
      try {
        const url = await flow.begin(orgId, clientId, {
          redirectUri: '',
          appState: '',
          binding: bound.binding,
          callbackUrl: bound.callbackUrl,
        });
        return { ok: true, url };
      } catch (e) {
        return { ok: false, reason: 'provider_error', message: describe(e) };
      }
    },

    async finish(params, rc, { callbackId, accept }) {
      const done = await flow.complete(
        params,
        rc,
        true,
        callbackId,
        accept && ((pending) => accept(pending.binding ?? '')),
      );
      if (!done.pending)
        return {
          ok: false,
          binding: undefined,
          orgId: undefined,
          ...(done.unknownCallback
            ? { reason: 'unknown_callback', message: 'no SSO credential has this redirect URI' }
            : { reason: 'unknown_state', message: 'no sign-in was started here with this state' }),
        };
      const binding = done.pending.binding ?? '';
      if (!done.ok)
        return {
          ok: false,
          binding,
          orgId: done.pending.orgId,
          reason: done.failure.reason,
          message: done.failure.message,
        };
      const orgId = done.pending.orgId;
      const found = (person: PersonRecord): SsoStoredSignIn => ({
        ok: true,
        binding,
        orgId,
        personId: person.personId,
        region: person.region,
        provider: done.provider,
        authentication: flow.authenticationOf(done.profile),
      });
      if (!done.prospective) return found(done.person);
      const linkStored = async () => {
        const linked = await flow.linkStored(orgId, done.profile, rc);
        if (linked.ok) return found(linked.person);
        const { reason, message } = linked.failure;
        return { ok: false, binding, orgId, reason, message } satisfies SsoFailed;
      };
      return { ...found(done.person), prospective: done.prospective, linkStored };
    },
  };
}
