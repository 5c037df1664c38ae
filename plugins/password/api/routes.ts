import { Elysia } from 'elysia';
import { eventHandle, type PersonDirectory } from '../../../core/capabilities/person-directory.ts';
import type { TokenIssuer } from '../../../core/capabilities/token-issuer.ts';
import { ServiceError } from '../../../core/errors.ts';
import { PasswordChangeInitiator } from '../../../core/events/shared-types.ts';
import { addressBucket } from '../../../core/http/client.ts';
import { consistentWrite } from '../../../core/http/consistency.ts';
import { errorResponses, ok, writeErrorResponses } from '../../../core/http/envelope.ts';
import { consistencyHeaders, errorDoc, writeErrorDocs } from '../../../core/http/openapi-docs.ts';
import { analyticsMetadata, type RequestContext } from '../../../core/http/sign-in-context.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import type { TokenBuckets } from '../../../core/rate-limit/index.ts';
import { PasswordErrors } from '../errors.ts';
import { HASH_LIMITS } from '../hashing/hash-cost.ts';
import type { Hasher } from '../hashing/hashing.ts';
import { checkImportedHash, checkNewPassword } from '../policy/policy.ts';
import type { ResetTokens } from '../reset/tokens.ts';
import { AnonymousResult, AuthenticateBody, PersonParams, SetPasswordBody, SignInResult } from '../schema.ts';
import type { createSignIn } from '../sign-in/sign-in.ts';
import type { CredentialStore } from '../store/credentials.ts';

export interface PasswordRouteDeps {
  directory: PersonDirectory;
  issuer: TokenIssuer;
  credentials: CredentialStore;
  hasher: Hasher;
  signIn: ReturnType<typeof createSignIn>['signIn'];
  readContext: (request: Request) => RequestContext;
  anonymousPerAddress: TokenBuckets;
  /** The person's open reset links are void once the password is set here. */
  resetTokens: ResetTokens;
}

const TAGS = ['Password and anonymous sign-in'];

const L = HASH_LIMITS;
const IMPORT_LIMITS_TEXT = `An imported hash may cost at most bcrypt cost ${L.bcryptCost}, or argon2id m=${L.argon2MemoryKiB} KiB, t=${L.argon2Iterations}, p=${L.argon2Parallelism} and m × t = ${L.argon2Work} (raised to the service's own argon2id parameters): a costlier one is a 400 naming the parameter and its limit.`;

export function passwordRoutes(ctx: ServiceContext, deps: PasswordRouteDeps) {
  const { directory, issuer, credentials, hasher } = deps;

  return new Elysia()
    .use(ctx.auth)
    .put(
      '/persons/:person_id/credentials/password',
      async ({ org, params, body, request, set }) => {
        const given = [body.password, body.password_hash].filter((x) => x !== undefined).length;
        if (given !== 1)
          throw PasswordErrors.INVALID_BODY('body must carry exactly one of password and password_hash');
        // The policy is checked before the person is looked up: a 400 says nothing about who exists.
        const hash =
          body.password !== undefined
            ? await hasher.hash(checkNewPassword(body.password))
            : checkImportedHash(body.password_hash ?? '', hasher.problemOf);
        const person = await directory.get(org.id, params.person_id);
        if (!person) throw PasswordErrors.PERSON_NOT_FOUND(params.person_id);
        // PasswordChanged_v1 names a handle (the spec's handle is required): a person without one,
        // anonymous, is refused rather than given a password that changes silently and serves nobody.
        const handle = person.handles[0];
        if (!handle) throw PasswordErrors.PERSON_WITHOUT_HANDLE(person.personId);
        await consistentWrite(request, ctx.headers, () =>
          credentials.set(org.id, person.personId, hash, async (tx) => {
            await deps.resetTokens.voidFor(tx, org.id, person.personId);
            await ctx.events.publish(
              org.id,
              'PasswordChanged_v1',
              {
                person_id: person.personId,
                region: person.region,
                handle: eventHandle(handle),
                initiated_by: PasswordChangeInitiator.AdminAPI,
              },
              { tx },
            );
          }),
        );
        set.status = 204;
      },
      {
        apiKey: true,
        params: PersonParams,
        body: SetPasswordBody,
        parse: 'json',
        headers: consistencyHeaders(ctx.headers),
        detail: {
          operationId: 'SetPersonPassword',
          summary: "Set a person's password, or import its hash",
          description: `Either \`password\` (8 to 256 characters after NFC normalisation, not a common password), hashed with argon2id, or \`password_hash\`, an argon2id PHC string or a bcrypt hash ($2a$, $2b$, $2y$) verified on the first sign-in and then rehashed to argon2id. ${IMPORT_LIMITS_TEXT} Emits PasswordChanged_v1.`,
          responses: {
            204: { description: 'The password is set' },
            400: errorDoc(
              'The password breaks the policy, or the hash is of a kind not accepted or costs more than the limits',
            ),
            404: errorDoc('No such person in this organization'),
            409: errorDoc('The person has no handle (an anonymous person): no password can be set'),
            ...writeErrorDocs,
          },
          tags: TAGS,
        },
      },
    )
    .post(
      '/authenticate/password',
      async ({ org, body, request }) => {
        const rc = deps.readContext(request);
        const given = { handle: body.handle, password: body.password, anonymousToken: body.anonymous_token };
        // A sign-in writes (the first-token record, a rehash, events): it honours the consistency headers.
        return ok(await consistentWrite(request, ctx.headers, () => deps.signIn(org.id, given, rc)));
      },
      {
        orgOnly: true,
        body: AuthenticateBody,
        parse: 'json',
        headers: consistencyHeaders(ctx.headers),
        response: { 200: SignInResult, ...errorResponses, ...writeErrorResponses },
        detail: {
          operationId: 'AuthenticatePassword',
          summary: 'Sign in with a handle and a password',
          description:
            "End-user facing: `Service-OrgID` only. 401 with one body for a wrong password, an unknown handle or a disabled person; 429 with Retry-After past the per-handle or per-address limit; 403 when the token_minted hook blocks the token, when the organization's authentication policy does not allow passwords, or when it requires a second factor the person has not enrolled. When the policy asks for a second factor, 200 `{person_id, mfa_required: true, mfa_token, methods}` and no token: POST /authenticate/mfa completes it. `anonymous_token`, a token of an anonymous person of this organization, links the sign-in to it (prev_anonymous_person_id).",
          tags: TAGS,
        },
      },
    )
    .post(
      '/persons/anonymous',
      async ({ org, request, set }) => {
        const rc = deps.readContext(request);
        if (rc.clientIp) {
          const take = await deps.anonymousPerAddress.take(`${org.id}|${addressBucket(rc.clientIp)}`);
          if (!take.ok)
            throw PasswordErrors.TOO_MANY_ATTEMPTS.with({
              headers: { 'retry-after': String(take.retryAfterSeconds) },
            })(`too many anonymous persons from this address; retry after ${take.retryAfterSeconds} s`);
        }
        // Stored once the token_minted hook allows its token: a blocked one leaves no person behind.
        const prospective = directory.prospectAnonymous(org.id, { analytics: rc.analytics });
        const issued = await consistentWrite(request, ctx.headers, () =>
          issuer
            .issue({
              orgId: org.id,
              personId: prospective.person.personId,
              prospective,
              methods: ['anonymous'],
              issuer: 'anonymous',
              authentications: [],
              request: rc.analytics,
            })
            .catch(async (error: unknown) => {
              // A blocked issuance fails the registration (API contract): said by AuthenticationFailed_v1,
              // with no person, as none was stored.
              if (error instanceof ServiceError && error.status === 403)
                await ctx.events.publish(org.id, 'AuthenticationFailed_v1', {
                  analytics_metadata: analyticsMetadata(rc.analytics),
                  failed_authn_method: 'anonymous',
                  failure_reason: 'token_blocked',
                  failure_detail: error.message,
                });
              throw error;
            }),
        );
        set.status = 201;
        return ok({ person_id: prospective.person.personId, token: issued.token });
      },
      {
        orgOnly: true,
        headers: consistencyHeaders(ctx.headers),
        response: { 201: AnonymousResult, ...errorResponses, ...writeErrorResponses },
        detail: {
          operationId: 'CreateAnonymousPerson',
          summary: 'Create an anonymous person and its token',
          description:
            'End-user facing: `Service-OrgID` only, rate-limited per client address. 403 when the token_minted hook blocks the token: then no person is created and no AnonymousPersonCreated_v1 published.',
          tags: TAGS,
        },
      },
    );
}
