// IssueRequest.person: the person a caller read moments ago (a sign-in session's active check) is the
// one the token is issued for, not read again; the issuer's own refusals still hold.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { type PersonRecord, personDirectory } from '../../../core/capabilities/person-directory.ts';
import { type IssueRequest, tokenIssuer } from '../../../core/capabilities/token-issuer.ts';
import { ServiceError } from '../../../core/errors.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { startTokensService, type TokensService } from '../../helpers/tokens-service.ts';

let t: TokensService;
beforeAll(async () => {
  t = await startTokensService();
});
afterAll(() => t.stop());

const issuerOf = () => t.service.ctx.capability(tokenIssuer)!;

/** The person as the directory answers it now. */
async function read(personId: string): Promise<PersonRecord> {
  const person = await t.service.ctx.capability(personDirectory)!.get(t.org.id, personId);
  if (!person) throw new Error(`no person ${personId}`);
  return person;
}

const idTokenWith = (personId: string, person: PersonRecord, extra: Partial<IssueRequest> = {}) =>
  issuerOf().issue({
    orgId: t.org.id,
    personId,
    person,
    methods: ['password'],
    issuer: 'oauth2',
    authentications: [
      { handle: { type: 'username', value: 'ada' }, method: 'password', timestamp: '2026-01-01T00:00:00Z' },
    ],
    request: {},
    idToken: { clientId: 'app-1', authTime: 1_800_000_000 },
    ...extra,
  });

/** The ServiceError an issuance throws, or a failure when it succeeds or throws another thing. */
async function refusal(issuing: Promise<unknown>): Promise<ServiceError> {
  const error = await issuing.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ServiceError)) throw new Error(`expected a ServiceError, got ${String(error)}`);
  return error;
}

describe('a token for the person the caller read (IssueRequest.person)', () => {
  it('is issued for that reading of the person: its groups, not read again', async () => {
    const { personId } = await t.persons.addPerson({ groups: ['stored'] });
    const person = await read(personId);
    // The stored person has the group "stored": the token says what the caller's reading says.
    const issued = await idTokenWith(personId, { ...person, groups: ['as-read'] });
    expect(issued.claims.sub).toBe(personId);
    expect(issued.claims.groups).toEqual(['as-read']);
  });

  it('is still refused for a disabled person', async () => {
    const { personId } = await t.persons.addPerson();
    const person = await read(personId);
    const error = await refusal(idTokenWith(personId, { ...person, active: false }));
    await expectStatus({ status: error.status, text: error.message }, 400);
    expect(error.message).toContain('is disabled');
  });

  it("is refused for another organization's person, as when the issuer reads it", async () => {
    const other = await t.service.ctx.orgs.create('Other');
    const { personId } = await t.persons.addPerson({}, { orgId: other.organization.id, key: other.apiKey });
    const theirs = await t.service.ctx.capability(personDirectory)!.get(other.organization.id, personId);
    const error = await refusal(idTokenWith(personId, theirs!));
    await expectStatus({ status: error.status, text: error.message }, 404);
  });

  it('is refused when the person handed in is not the one personId names', async () => {
    const a = await t.persons.addPerson();
    const b = await t.persons.addPerson();
    await expect(idTokenWith(a.personId, await read(b.personId))).rejects.toThrow(
      "a person read by the caller is personId's",
    );
  });
});
