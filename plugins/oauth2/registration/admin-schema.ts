import * as v from 'valibot';
import { SCOPE_TOKEN } from '../schema.ts';

/** An initial access token lives a day unless asked otherwise, at most 30 days. */
export const DEFAULT_TOKEN_SECONDS = 86_400;
export const MAX_TOKEN_SECONDS = 30 * 86_400;
/** An initial access token registers one client unless asked otherwise, at most 1000. */
export const MAX_TOKEN_USES = 1000;

const positiveInteger = (max: number, what: string) =>
  v.pipe(
    v.number('must be a positive integer'),
    v.integer('must be a positive integer'),
    v.minValue(1, 'must be at least 1'),
    v.maxValue(max, `must be at most ${max}`),
    v.description(what),
  );

/** Members not in `entries` are refused, each by name. */
const exactly = <E extends v.ObjectEntries>(entries: E) =>
  v.objectWithRest(
    entries,
    v.never(`is not a member of this body (accepted: ${Object.keys(entries).join(', ')})`),
    'is required',
  );

export const RegistrationTokenBody = exactly({
  expires_in: v.optional(
    positiveInteger(
      MAX_TOKEN_SECONDS,
      `Seconds the token may be used for: default ${DEFAULT_TOKEN_SECONDS} (a day), at most ${MAX_TOKEN_SECONDS} (30 days).`,
    ),
  ),
  uses: v.optional(
    positiveInteger(MAX_TOKEN_USES, `Clients it may register: default 1, at most ${MAX_TOKEN_USES}.`),
  ),
});

const tokenEntries = {
  id: v.pipe(v.string(), v.description('Names the token to revoke it (DELETE).')),
  expires_at: v.pipe(v.string(), v.description('When it stops working (RFC 3339).')),
  uses: v.pipe(v.number(), v.description('Clients it was issued to register.')),
  uses_left: v.pipe(v.number(), v.description('Clients it may still register.')),
  created_at: v.string(),
};

export const RegistrationTokenSchema = v.object(tokenEntries);

export const NewRegistrationTokenSchema = v.object({
  ...tokenEntries,
  token: v.pipe(
    v.string(),
    v.description(
      'The initial access token, shown in this response only (only its SHA-256 digest is kept): the client sends it as Authorization: Bearer to the registration endpoint.',
    ),
  ),
});

export const RegistrationTokenIdParams = v.object({ token_id: v.string() });

const scopeList = v.pipe(
  v.array(
    v.pipe(
      v.string('must be a string'),
      v.maxLength(128, 'must be at most 128 characters'),
      v.regex(SCOPE_TOKEN, 'must be a scope token: visible ASCII except space, " and \\ (RFC 6749 §3.3)'),
    ),
    'must be an array of scopes',
  ),
  v.maxLength(100, 'must list at most 100 scopes'),
);

/** PUT /oauth2/registration-policy: a member left out takes its default. */
export const RegistrationPolicyBody = exactly({
  open_registration: v.optional(
    v.pipe(
      v.boolean('must be true or false'),
      v.description(
        "Whether anybody may register a public client at the organization's registration endpoint without an initial access token. Default false.",
      ),
    ),
  ),
  max_open_clients: v.optional(
    positiveInteger(
      10_000,
      'How many clients open registration may make in this organization (deleted ones no longer count). Default 100, at most 10000.',
    ),
  ),
  per_address_per_hour: v.optional(
    positiveInteger(
      1000,
      'Open registrations one client address (an IPv6 /64) may make an hour. Default 10, at most 1000.',
    ),
  ),
  allowed_scopes: v.optional(
    v.pipe(
      scopeList,
      v.description(
        'The scopes an open-registered client may have: those it asks for outside this list are dropped, and one that asks for none gets all of them. Default ["openid"].',
      ),
    ),
  ),
});

export const RegistrationPolicySchema = v.object({
  open_registration: v.boolean(),
  max_open_clients: v.number(),
  per_address_per_hour: v.number(),
  allowed_scopes: v.array(v.string()),
  open_clients: v.pipe(v.number(), v.description('Clients open registration has made and that still exist.')),
});
