import { isIpLiteralHost, isLocalhostName } from 'identity-service/core';
import * as v from 'valibot';

// One or more DNS labels and a top-level domain: `example.acme-id.com`, `login.example.org`.
const HOST_NAME = /^(?=.{4,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/;

const DOMAIN_RULE =
  'must be the host name of an Acme ID tenant, such as example.acme-id.com (no scheme, port, path, IP address or localhost)';

/**
 * The credential's `options.acme`: what differs between one organization's Acme ID tenant and another's.
 * `authorize_scopes` is not here: it is common to every provider and the service handles it.
 */
export const acmeOptions = v.object(
  {
    /** The tenant's host name; every endpoint URL is built from it. */
    domain: v.pipe(
      v.string(`domain ${DOMAIN_RULE}`),
      v.trim(),
      v.toLowerCase(),
      v.check(
        (s) => HOST_NAME.test(s) && !isIpLiteralHost(s) && !isLocalhostName(s),
        `domain ${DOMAIN_RULE}`,
      ),
    ),
    /**
     * Asks Acme ID to show its login or consent page even when the person has a session there.
     * @default undefined (Acme ID decides)
     */
    prompt: v.optional(v.picklist(['login', 'consent'], 'prompt must be one of login, consent')),
  },
  // A missing key's issue carries the object's message: name the key, not "Invalid key".
  (issue) =>
    issue.kind === 'schema' && issue.expected !== 'Object'
      ? `${issue.expected?.replaceAll('"', '')} is required`
      : 'must be an object of Acme ID options',
);

export type AcmeOptions = v.InferOutput<typeof acmeOptions>;
