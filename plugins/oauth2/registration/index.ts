import type { ServiceContext } from '../../../core/plugin.ts';
import type { ClientCache } from '../clients/cache.ts';
import type { ClientStore } from '../store/clients.ts';
import { registrationAdminRoutes } from './admin-routes.ts';
import { createClientConfiguration } from './manage.ts';
import { createRegistrar } from './register.ts';
import { registrationRoutes } from './routes.ts';
import { createRegistrationStore } from './store.ts';

/**
 * Dynamic client registration: the administrators' API (initial access tokens, the open registration
 * policy), the registration endpoints (RFC 7591) and the client configuration endpoint (RFC 7592).
 * Clients are made and changed by the same code, and rules, as POST and PATCH /oauth2/clients.
 */
export function dynamicRegistrationRoutes(ctx: ServiceContext, clients: ClientStore, cache: ClientCache) {
  const registrations = createRegistrationStore({ storage: ctx.storage, clock: ctx.clock });
  const rules = { publicBaseUrl: ctx.config.publicBaseUrl };
  const registrar = createRegistrar({
    clients,
    registrations,
    rules,
    storage: ctx.storage,
    clock: ctx.clock,
  });
  const configuration = createClientConfiguration({ clients, cache, registrations, rules });
  return registrationAdminRoutes(ctx, registrations).use(registrationRoutes(ctx, registrar, configuration));
}
