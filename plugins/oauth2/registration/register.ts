import type * as v from 'valibot';
import { addressBucket } from '../../../core/http/client.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { createTokenBuckets, type TokenBuckets } from '../../../core/rate-limit/index.ts';
import { type ClientRuleContext, createClient } from '../clients/admin.ts';
import type { ClientCreateSchema } from '../schema.ts';
import type { ClientStore } from '../store/clients.ts';
import { fromClientRules, invalidToken, tooMany } from './errors.ts';
import { registrationBody } from './metadata.ts';
import { clientInformation } from './response.ts';
import type { RegistrationStore } from './store.ts';

/** What registration needs of the plugin. */
export interface RegisterDeps {
  clients: ClientStore;
  registrations: RegistrationStore;
  rules: ClientRuleContext;
  storage: Storage;
  clock: Clock;
}

/** Where a registration request arrived, and with what. */
export interface RegistrationRequest {
  /** The organization of the registration endpoint; undefined at the deployment's. */
  orgId?: string;
  /** The initial access token (the Bearer token), if any. */
  token?: string;
  /** The client's address, for open registration's rate. */
  clientIp?: string;
  json: unknown;
}

/**
 * Registers clients (RFC 7591 §3): with an initial access token, at the deployment's endpoint (the token
 * names the organization) or at its organization's; without one, at an organization's endpoint whose
 * policy allows open registration. Answers the client information response's body.
 */
export function createRegistrar(deps: RegisterDeps) {
  const { registrations } = deps;
  // One limiter per rate an organization chose: a bucket's capacity and refill are the limiter's.
  const limiters = new Map<number, TokenBuckets>();
  const limiter = (perHour: number) => {
    let buckets = limiters.get(perHour);
    if (!buckets) {
      buckets = createTokenBuckets({
        name: `oauth2-open-registration-${perHour}`,
        clock: deps.clock,
        storage: deps.storage,
        capacity: perHour,
        perMinute: perHour / 60,
      });
      limiters.set(perHour, buckets);
    }
    return buckets;
  };

  async function create(orgId: string, body: v.InferOutput<typeof ClientCreateSchema>, open: boolean) {
    let made: Awaited<ReturnType<typeof createClient>>;
    try {
      made = await createClient(deps.clients, orgId, body, deps.rules);
    } catch (e) {
      fromClientRules(e);
    }
    const registrationAccessToken = await registrations.bind(made.row.clientId, orgId, open);
    return { ...made, registrationAccessToken };
  }

  async function withToken(r: RegistrationRequest & { token: string }) {
    const token = await registrations.usable(r.token);
    if (!token) throw invalidToken('the initial access token is unknown, expired, revoked or used up');
    if (r.orgId !== undefined && token.orgId !== r.orgId)
      throw invalidToken(
        'the initial access token is not one of the organization of this registration endpoint',
      );
    const body = registrationBody(
      r.json,
      { open: false, allowedScopes: [], defaultMethod: 'client_secret_basic' },
      r.orgId !== undefined,
    );
    // Taken once the metadata is known good: a refused request costs the administrator no use.
    if (!(await registrations.takeUse(token.id)))
      throw invalidToken('the initial access token is unknown, expired, revoked or used up');
    return create(token.orgId, body, false);
  }

  async function open(r: RegistrationRequest & { orgId: string }) {
    const policy = await registrations.policy(r.orgId);
    if (!policy.open_registration)
      throw invalidToken(
        'this organization does not allow open registration: register with an initial access token (Authorization: Bearer) from its administrator',
      );
    const take = await limiter(policy.per_address_per_hour).take(
      `${r.orgId}|${addressBucket(r.clientIp ?? 'unknown')}`,
    );
    if (!take.ok)
      throw tooMany(
        `too many registrations from this address (at most ${policy.per_address_per_hour} an hour); retry after ${take.retryAfterSeconds} s`,
        take.retryAfterSeconds,
      );
    const body = registrationBody(
      r.json,
      { open: true, allowedScopes: policy.allowed_scopes, defaultMethod: 'none' },
      true,
    );
    const full = () =>
      tooMany(
        `this organization has the ${policy.max_open_clients} open-registered clients its policy allows (max_open_clients): an administrator may delete some or raise the limit`,
        3600,
      );
    if ((await registrations.openClients(r.orgId)) >= policy.max_open_clients) throw full();
    const made = await create(r.orgId, body, true);
    // Counted again once in: of registrations racing for the last places, none goes past the limit.
    if ((await registrations.openClients(r.orgId)) > policy.max_open_clients) {
      await deps.clients.remove(r.orgId, made.row.clientId);
      throw full();
    }
    return made;
  }

  return {
    /** Registers a client; answers the client information response (201's body). */
    async register(r: RegistrationRequest): Promise<Record<string, unknown>> {
      let made: Awaited<ReturnType<typeof create>>;
      if (r.token !== undefined) made = await withToken({ ...r, token: r.token });
      else if (r.orgId !== undefined) made = await open({ ...r, orgId: r.orgId });
      else
        throw invalidToken(
          "registration here needs an initial access token (Authorization: Bearer) from an organization's administrator",
        );
      return clientInformation(made.row, {
        publicBaseUrl: deps.rules.publicBaseUrl,
        ...(made.secret !== undefined ? { secret: made.secret } : {}),
        registrationAccessToken: made.registrationAccessToken,
      });
    },
  };
}

export type Registrar = ReturnType<typeof createRegistrar>;
