import { constantTimeEqual } from '../../../core/ids.ts';
import { type ClientRuleContext, patchClient } from '../clients/admin.ts';
import type { ClientCache } from '../clients/cache.ts';
import { secretDigest } from '../clients/secrets.ts';
import type { ClientRow } from '../schema.ts';
import type { ClientStore } from '../store/clients.ts';
import { fromClientRules, invalidMetadata, invalidToken } from './errors.ts';
import { replacementBody } from './metadata.ts';
import { clientInformation } from './response.ts';
import type { RegistrationStore } from './store.ts';

/** What the client configuration endpoint needs of the plugin. */
export interface ManageDeps {
  clients: ClientStore;
  cache: ClientCache;
  registrations: RegistrationStore;
  rules: ClientRuleContext;
}

const hex = (s: string) => Uint8Array.from(s.match(/../g) ?? [], (b) => Number.parseInt(b, 16));

/**
 * The client configuration endpoint (RFC 7592): read, replace and delete a registered client with its
 * registration access token. A token of another client, of a deleted client or of none is 401
 * invalid_token, as RFC 7592 §2.1 asks for a client that does not exist; clients made through
 * POST /oauth2/clients have no token, so they are managed through the API only.
 */
export function createClientConfiguration(deps: ManageDeps) {
  const { registrations } = deps;

  async function authorize(
    token: string | undefined,
    clientId: string,
  ): Promise<{ row: ClientRow; open: boolean }> {
    if (token === undefined)
      throw invalidToken('the registration access token is missing (Authorization: Bearer)');
    const bound = await registrations.clientOf(token);
    if (!bound || bound.clientId !== clientId)
      throw invalidToken("the registration access token is not this client's, or the client was deleted");
    const row = (await deps.clients.findMany([clientId]))[0];
    if (!row || row.orgId !== bound.orgId)
      throw invalidToken("the registration access token is not this client's, or the client was deleted");
    return { row, open: bound.open };
  }

  const answer = (row: ClientRow, token: string) =>
    clientInformation(row, { publicBaseUrl: deps.rules.publicBaseUrl, registrationAccessToken: token });

  /** RFC 7592 §2.2: the body names the client, and its secret when it gives one must be the client's. */
  async function checkIdentity(json: unknown, row: ClientRow): Promise<void> {
    const body = typeof json === 'object' && json !== null ? (json as Record<string, unknown>) : {};
    if (body.client_id !== row.clientId)
      throw invalidMetadata(
        `client_id: must be this client's own, ${row.clientId} (RFC 7592 section 2.2: the client ID cannot change)`,
      );
    const secret = body.client_secret;
    if (secret === undefined || secret === null) return;
    const matches =
      typeof secret === 'string' &&
      row.secretDigest !== null &&
      constantTimeEqual(hex(row.secretDigest), hex(await secretDigest(secret)));
    if (!matches) throw invalidMetadata("client_secret: is not this client's secret (RFC 7592 section 2.2)");
  }

  return {
    async read(token: string | undefined, clientId: string) {
      const { row } = await authorize(token, clientId);
      return answer(row, token!);
    },

    /** Replaces the client's metadata: members left out go back to their defaults (RFC 7592 §2.2). */
    async replace(token: string | undefined, clientId: string, json: unknown) {
      const { row, open } = await authorize(token, clientId);
      await checkIdentity(json, row);
      const policy = open ? await registrations.policy(row.orgId) : undefined;
      const body = replacementBody(json, row, {
        open,
        allowedScopes: policy?.allowed_scopes ?? [],
        defaultMethod: row.public ? 'none' : 'client_secret_basic',
      });
      let updated: ClientRow;
      try {
        updated = await patchClient(deps.clients, row, body, deps.rules);
      } catch (e) {
        fromClientRules(e);
      }
      deps.cache.forget(row.clientId);
      return answer(updated, token!);
    },

    /** Deletes the client, as DELETE /oauth2/clients/{id} does; its registration access token goes with it. */
    async remove(token: string | undefined, clientId: string): Promise<void> {
      const { row } = await authorize(token, clientId);
      await deps.clients.remove(row.orgId, row.clientId);
      deps.cache.forget(row.clientId);
    },
  };
}
