import { sql } from 'drizzle-orm';
import { Elysia } from 'elysia';
import * as v from 'valibot';
import type { PersonDirectory } from '../../../core/capabilities/person-directory.ts';
import { deletePersonCredential, type PersonCredential } from '../../../core/factors/credentials.ts';
import { consistentWrite } from '../../../core/http/consistency.ts';
import { errorResponses, ok, resultOf } from '../../../core/http/envelope.ts';
import {
  consistencyHeaders,
  errorDoc,
  errorDocs,
  routeDetail,
  writeErrorDocs,
} from '../../../core/http/openapi-docs.ts';
import { exactObject } from '../../../core/http/validation.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import type { Transaction } from '../../../core/ports/storage.ts';
import { FactorsErrors } from '../errors.ts';
import type { PolicyStore } from '../policy/store.ts';
import { credentialsOf } from './list.ts';

/**
 * Serialises the deletions of one person's credentials (a transaction lock, on Postgres and PGlite
 * alike): the persons' table is the persons plugin's, so the lock is an advisory one on the person's
 * key rather than their row.
 */
const lockPersonCredentials = (tx: Transaction, orgId: string, personId: string) =>
  tx.query(sql`select pg_advisory_xact_lock(hashtextextended(${`factors:${orgId}:${personId}`}, 0))`);

const PersonParams = v.object({
  person_id: v.pipe(v.string(), v.maxLength(128, 'must be at most 128 characters')),
});
const CredentialParams = v.object({
  person_id: v.pipe(v.string(), v.maxLength(128, 'must be at most 128 characters')),
  credential_id: v.pipe(v.string(), v.maxLength(256, 'must be at most 256 characters')),
});
const DeleteQuery = exactObject(
  {
    force: v.optional(
      v.pipe(
        v.picklist(['true', 'false'], 'must be true or false'),
        v.description(
          "true deletes the person's last first factor the policy allows even though the person can then no longer sign in.",
        ),
      ),
    ),
  },
  'parameter',
);

const CredentialAnswer = v.object({
  credential_id: v.string(),
  type: v.pipe(v.string(), v.description('The factor it serves: password, webauthn, totp, ...')),
  name: v.optional(v.string()),
  created_at: v.pipe(v.string(), v.description('RFC 3339')),
  last_used_at: v.optional(v.pipe(v.string(), v.description('RFC 3339'))),
});

const answerOf = (c: PersonCredential) => ({
  credential_id: c.credentialId,
  type: c.type,
  ...(c.name !== undefined ? { name: c.name } : {}),
  created_at: new Date(c.createdAt).toISOString(),
  ...(c.lastUsedAt !== undefined ? { last_used_at: new Date(c.lastUsedAt).toISOString() } : {}),
});

/** GET /persons/{id}/credentials and DELETE /persons/{id}/credentials/{credential_id}. */
export function credentialRoutes(
  ctx: ServiceContext,
  deps: { directory: PersonDirectory; policies: PolicyStore },
) {
  const detail = routeDetail(['Authentication factors']);
  const personOf = async (orgId: string, personId: string) => {
    const person = await deps.directory.get(orgId, personId);
    if (!person) throw FactorsErrors.PERSON_NOT_FOUND(personId);
    return person;
  };
  return new Elysia()
    .use(ctx.auth)
    .get(
      '/persons/:person_id/credentials',
      async ({ org, params }) => {
        const person = await personOf(org.id, params.person_id);
        return ok((await credentialsOf(ctx.hooks, org.id, person.personId)).map(answerOf));
      },
      {
        apiKey: true,
        params: PersonParams,
        response: { 200: resultOf(v.array(CredentialAnswer)), ...errorResponses },
        detail: detail(
          'GetPersonsPersonIdCredentials',
          "A person's credentials",
          'Every credential the factor plugins keep for the person (a password, passkeys, confirmed TOTP), oldest first. Secrets never appear. The password, when set, is `credential_id` `password`.',
        ),
      },
    )
    .delete(
      '/persons/:person_id/credentials/:credential_id',
      async ({ org, params, query, request, set }) => {
        const person = await personOf(org.id, params.person_id);
        const policy = query.force === 'true' ? undefined : await deps.policies.get(org.id);
        await consistentWrite(request, ctx.headers, () =>
          ctx.storage.transaction(async (tx) => {
            // The rule's check and the delete are one: two deletes of the person's credentials take
            // turns, each reading (in the transaction, after the lock) what the other left.
            await lockPersonCredentials(tx, org.id, person.personId);
            const all = await credentialsOf(ctx.hooks, org.id, person.personId, tx);
            const target = all.find((c) => c.credentialId === params.credential_id);
            if (!target) throw FactorsErrors.CREDENTIAL_NOT_FOUND(params.credential_id);
            if (policy && target.firstFactor) {
              const allowed = (c: PersonCredential) =>
                c.firstFactor && policy.firstFactors.some((f) => f === c.type);
              if (allowed(target) && !all.some((c) => c !== target && allowed(c)))
                throw FactorsErrors.LAST_FIRST_FACTOR(
                  `credential ${target.credentialId} (${target.type}) is the person's last first factor the policy allows (${policy.firstFactors.join(', ')}): deleting it would leave the person unable to sign in; add ?force=true to delete it anyway`,
                );
            }
            const deleted = (
              await ctx.hooks.run(deletePersonCredential, {
                orgId: org.id,
                personId: person.personId,
                credentialId: target.credentialId,
                tx,
              })
            ).find((c) => c !== undefined);
            if (!deleted) throw FactorsErrors.CREDENTIAL_NOT_FOUND(params.credential_id);
          }),
        );
        set.status = 204;
      },
      {
        apiKey: true,
        params: CredentialParams,
        query: DeleteQuery,
        headers: consistencyHeaders(ctx.headers),
        detail: {
          ...detail(
            'DeletePersonsPersonIdCredentialsCredentialId',
            "Delete one of a person's credentials",
            "The person's last first factor the organization's policy allows (its last password or passkey) is kept with 409 unless `?force=true`: without it the person could no longer sign in.",
          ),
          responses: {
            204: { description: 'The credential is deleted' },
            ...errorDocs,
            409: errorDoc("The person's last first factor the policy allows; `?force=true` deletes it"),
            ...writeErrorDocs,
          },
        },
      },
    );
}
