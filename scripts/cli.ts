/**
 * The admin CLI. Reads the same configuration as the server (DATA_DIR or DATABASE_URL, MASTER_KEY, ...)
 * and prints the command's JSON alone on standard output. `npx identity-service` runs it (scripts/cli-bin.mjs),
 * as does `npm run -s cli --`.
 *
 *   npx identity-service org create --name Acme            {"organization_id","api_key"}
 *   npx identity-service org list
 *   npx identity-service org api-key rotate --org <id> [--grace <seconds>]
 *   npx identity-service keys rotate --org <id>            new signing key; the old one stays in the JWKS
 *   npx identity-service keys rotate --tokens              new identity-token key; the old one stays published
 *   npx identity-service oauth-client create --org <id> --name <name> [--grant-types a,b] [--scopes a,b]
 *                        [--redirect-uri <uri> ...] [--public]    {"client_id","client_secret",...}
 *                        [--post-logout-redirect-uri <uri> ...] [--backchannel-logout-uri <uri>]
 *                        [--backchannel-logout-session-required] [--third-party]
                     [--token-endpoint-auth-method <method>] [--jwks-uri <uri>]
 *                        [--token-endpoint-auth-method <method>] [--jwks-uri <uri>]
 *   npx identity-service secrets reseal                    seal every value again with the current master key
 *   npx identity-service migrate                           apply pending migrations and exit
 */
import { parseArgs } from 'node:util';
import { DataDirLockedError } from '../adapters/pglite/lock.ts';
import { ConfigError, loadConfig } from '../core/config.ts';
import { ServiceError } from '../core/errors.ts';
import { parseOrThrow } from '../core/http/validation.ts';
import { isUuid } from '../core/ids.ts';
import { createLogger } from '../core/log.ts';
import { StorageError } from '../core/ports/storage.ts';
import type { Service } from '../core/service.ts';
import { TOKEN_KEYS_OWNER } from '../core/tokens/token-keys.ts';
import { createService } from '../entry/create-service.ts';
import {
  authMethodOf,
  ClientCreateSchema,
  createClient,
  createClientStore,
} from '../plugins/oauth2/index.ts';

const USAGE = `usage: npx identity-service <command>   (or npm run -s cli -- <command>)
  org create --name <name>
  org list
  org api-key rotate --org <organization_id> [--grace <seconds>]
  keys rotate --org <organization_id>
  keys rotate --tokens
  oauth-client create --org <organization_id> --name <name> [--grant-types <a,b>] [--scopes <a,b>]
                      [--redirect-uri <uri> ...] [--public]
                      [--post-logout-redirect-uri <uri> ...] [--backchannel-logout-uri <uri>]
                      [--backchannel-logout-session-required] [--third-party]
                     [--token-endpoint-auth-method <method>] [--jwks-uri <uri>]
  secrets reseal
  migrate`;

class UsageError extends Error {}

const out = (value: unknown) => console.log(JSON.stringify(value, null, 2));

/** The API's field names as the CLI's flags, for validation messages. */
const FLAG_OF: Record<string, string> = {
  'body.client_name': '--name',
  'body.grant_types': '--grant-types',
  'body.scopes': '--scopes',
  'body.redirect_uris': '--redirect-uri',
  'body.public': '--public',
  'body.post_logout_redirect_uris': '--post-logout-redirect-uri',
  'body.backchannel_logout_uri': '--backchannel-logout-uri',
  'body.backchannel_logout_session_required': '--backchannel-logout-session-required',
  'body.first_party': '--third-party',
  'body.token_endpoint_auth_method': '--token-endpoint-auth-method',
  'body.jwks_uri': '--jwks-uri',
};

/** The flags of oauth-client create. */
interface ClientFlags {
  name?: string;
  'grant-types'?: string;
  scopes?: string;
  'redirect-uri'?: string[];
  public?: boolean;
  'post-logout-redirect-uri'?: string[];
  'backchannel-logout-uri'?: string;
  'backchannel-logout-session-required'?: boolean;
  /** A third-party app (first_party: false): its users see a consent page. */
  'third-party'?: boolean;
  /** RFC 7591's name: none is a public client; private_key_jwt needs --jwks-uri. */
  'token-endpoint-auth-method'?: string;
  'jwks-uri'?: string;
}

/** A comma- or space-separated list flag. */
const listOf = (text: string | undefined) => (text ?? '').split(/[\s,]+/).filter((s) => s !== '');

/** oauth-client create: the same validation and rules as POST /oauth2/clients, messages naming the flags. */
async function createOAuthClient(service: Service, orgId: string, flags: ClientFlags) {
  const name = flags.name?.trim();
  if (!name) throw new UsageError('--name <name> is required');
  const method = flags['token-endpoint-auth-method'];
  const isPublic = flags.public ?? method === 'none';
  const grantTypes =
    flags['grant-types'] === undefined
      ? [isPublic ? 'authorization_code' : 'client_credentials']
      : listOf(flags['grant-types']);
  const store = createClientStore({
    storage: service.ctx.storage,
    clock: service.ctx.clock,
    secrets: service.ctx.secrets,
  });
  try {
    const body = parseOrThrow(
      ClientCreateSchema,
      {
        client_name: name,
        scopes: listOf(flags.scopes),
        grant_types: grantTypes,
        redirect_uris: flags['redirect-uri'] ?? [],
        public: isPublic,
        post_logout_redirect_uris: flags['post-logout-redirect-uri'] ?? [],
        ...(flags['backchannel-logout-uri'] !== undefined
          ? { backchannel_logout_uri: flags['backchannel-logout-uri'] }
          : {}),
        backchannel_logout_session_required: flags['backchannel-logout-session-required'] ?? false,
        first_party: !(flags['third-party'] ?? false),
        ...(method !== undefined ? { token_endpoint_auth_method: method } : {}),
        ...(flags['jwks-uri'] !== undefined ? { jwks_uri: flags['jwks-uri'] } : {}),
      },
      'body',
    );
    const { row, secret } = await createClient(store, orgId, body, {
      publicBaseUrl: service.ctx.config.publicBaseUrl,
    });
    return {
      client_id: row.clientId,
      ...(secret !== undefined ? { client_secret: secret } : {}),
      client_name: row.name,
      grant_types: row.grantTypes,
      scopes: row.scopes,
      redirect_uris: row.redirectUris,
      public: row.public,
      post_logout_redirect_uris: row.postLogoutRedirectUris,
      ...(row.backchannelLogoutUri !== null ? { backchannel_logout_uri: row.backchannelLogoutUri } : {}),
      backchannel_logout_session_required: row.backchannelLogoutSessionRequired,
      first_party: row.firstParty,
      token_endpoint_auth_method: authMethodOf(row),
      ...(row.jwksUri !== null ? { jwks_uri: row.jwksUri } : {}),
    };
  } catch (e) {
    if (!(e instanceof ServiceError) || e.status !== 400) throw e;
    throw new UsageError(e.message.replace(/body\.[a-z_]+/g, (field) => FLAG_OF[field] ?? field));
  }
}

function requireOrg(org: string | undefined): string {
  if (!org) throw new UsageError('--org <organization_id> is required');
  if (!isUuid(org))
    throw new UsageError(`--org must be an organization ID (a UUID); got ${JSON.stringify(org)}`);
  return org.toLowerCase();
}

const COMMANDS = new Set([
  'org create',
  'org list',
  'org api-key rotate',
  'keys rotate',
  'oauth-client create',
  'secrets reseal',
  'migrate',
]);

async function run(
  service: Service,
  words: string[],
  flags: ClientFlags & {
    org?: string;
    grace?: string;
    tokens?: boolean;
  },
) {
  const { orgs, signer } = service.ctx;
  const command = words.join(' ');
  switch (command) {
    case 'org create': {
      const name = flags.name?.trim();
      if (!name) throw new UsageError('--name <name> is required');
      if (name.length > 200) throw new UsageError('--name must be at most 200 characters');
      const { organization, apiKey } = await orgs.create(name);
      return out({ organization_id: organization.id, api_key: apiKey });
    }
    case 'org list':
      return out(
        (await orgs.list()).map((o) => ({
          organization_id: o.id,
          name: o.name,
          created_at: o.createdAt.toISOString(),
        })),
      );
    case 'org api-key rotate': {
      const orgId = requireOrg(flags.org);
      // Digits only: `--grace=` (an unset variable) must not mean 0, nor `0x10` 16.
      if (flags.grace !== undefined && !/^\d{1,7}$/.test(flags.grace))
        throw new UsageError('--grace must be whole seconds from 0 to 2592000');
      const grace = flags.grace === undefined ? 0 : Number(flags.grace);
      if (grace > 30 * 24 * 3600) throw new UsageError('--grace must be whole seconds from 0 to 2592000');
      if (!(await orgs.get(orgId))) throw new UsageError(`no organization ${orgId}`);
      const { apiKey } = await orgs.rotateKey(orgId, grace);
      return out({ organization_id: orgId, api_key: apiKey, previous_keys_expire_in_seconds: grace });
    }
    case 'keys rotate': {
      if (flags.tokens) {
        if (flags.org) throw new UsageError('--tokens and --org name different keys: give one');
        // The old key stays in /.well-known/jwks.json for the Signer's grace (7 days), longer than any token.
        return out({ token_keys: true, ...(await signer.rotate(TOKEN_KEYS_OWNER)) });
      }
      const orgId = requireOrg(flags.org);
      if (!(await orgs.get(orgId))) throw new UsageError(`no organization ${orgId}`);
      return out({ organization_id: orgId, ...(await signer.rotate(orgId)) });
    }
    case 'oauth-client create': {
      const orgId = requireOrg(flags.org);
      if (!service.plugins.includes('oauth2'))
        throw new UsageError(
          'the oauth2 plugin is not enabled in this deployment (PLUGINS, service.config.ts)',
        );
      if (!(await orgs.get(orgId))) throw new UsageError(`no organization ${orgId}`);
      return out({ organization_id: orgId, ...(await createOAuthClient(service, orgId, flags)) });
    }
    case 'secrets reseal': {
      const resealed = await service.reseal();
      return out({ current_key_id: service.ctx.secrets.currentKeyId, resealed });
    }
    case 'migrate':
      return out({ migrated: true });
    default:
      throw new UsageError(command ? `unknown command: ${command}` : 'no command given');
  }
}

async function main(): Promise<number> {
  let parsed: ReturnType<
    typeof parseArgs<{
      options: {
        name: { type: 'string' };
        org: { type: 'string' };
        grace: { type: 'string' };
        tokens: { type: 'boolean' };
        help: { type: 'boolean' };
      };
      allowPositionals: true;
    }>
  >;
  try {
    parsed = parseArgs({
      args: process.argv.slice(2),
      options: {
        name: { type: 'string' },
        org: { type: 'string' },
        grace: { type: 'string' },
        tokens: { type: 'boolean' },
        'grant-types': { type: 'string' },
        scopes: { type: 'string' },
        'redirect-uri': { type: 'string', multiple: true },
        public: { type: 'boolean' },
        'post-logout-redirect-uri': { type: 'string', multiple: true },
        'backchannel-logout-uri': { type: 'string' },
        'backchannel-logout-session-required': { type: 'boolean' },
        'third-party': { type: 'boolean' },
        'token-endpoint-auth-method': { type: 'string' },
        'jwks-uri': { type: 'string' },
        help: { type: 'boolean' },
      },
      allowPositionals: true,
    });
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (parsed.values.help || parsed.positionals.length === 0) {
    console.error(USAGE);
    return parsed.values.help ? 0 : 2;
  }
  const command = parsed.positionals.join(' ');
  // Checked before the database is opened: a typo must not create a data directory, nor wait on a lock.
  if (!COMMANDS.has(command)) {
    console.error(`unknown command: ${command}\n${USAGE}`);
    return 2;
  }
  let service: Service | undefined;
  try {
    const config = loadConfig(process.env);
    // Logs go to standard error: standard output carries only the command's JSON. Warnings and errors
    // by default (a command's info lines would be noise); LOG_LEVEL may ask for more (debug) or less.
    const level = config.logLevel === 'info' ? 'warn' : config.logLevel;
    const log = createLogger(level, { component: 'cli' }, (line) => console.error(line));
    service = await createService(config, { log, overrides: { purpose: 'admin CLI' } });
    await run(service, parsed.positionals, parsed.values);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`${e.message}\n${USAGE}`);
      return 2;
    }
    if (e instanceof DataDirLockedError) {
      console.error(`${e.message}\nStop the server (Ctrl-C), run this command, then start the server again.`);
      return 3;
    }
    if (e instanceof ConfigError || e instanceof StorageError) {
      console.error(e.message);
      return 1;
    }
    console.error(`failed: ${(e as Error).message}`);
    return 1;
  } finally {
    await service?.stop();
  }
}

process.exit(await main());
