import { and, eq } from 'drizzle-orm';
import type { PersonDirectory } from '../../core/capabilities/person-directory.ts';
import {
  deletePersonCredential,
  type PersonCredential,
  personCredentials,
} from '../../core/factors/credentials.ts';
import { sha256, toHex } from '../../core/ids.ts';
import { beforePersonDeleted } from '../../core/persons/before-person-deleted.ts';
import type { Transaction } from '../../core/ports/storage.ts';
import { EmailCodeErrors } from './errors.ts';
import { emailChallenges } from './schema.ts';

/**
 * A stable credential ID for one email address of a person: a UUID (version 8, RFC 9562) made of the
 * SHA-256 of the organization, the person and the address, so it is the same on every read and names
 * nothing by itself.
 */
export async function emailCredentialId(orgId: string, personId: string, address: string): Promise<string> {
  const hex = toHex(await sha256(`email-credential|${orgId}|${personId}|${address}`)).slice(0, 32);
  const variant = ((Number.parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * The person's email addresses as credentials (type `otp_via_email`): each signs them in on its own when
 * the policy allows email codes or links. Not listed as an enrolled second factor (`secondFactor`
 * false): an address is no enrolment, so `optional` second factors do not ask it of every person; under
 * `required`, the factors plugin offers the code to any person with an address. They are handles
 * of the person, kept by the persons plugin: deleting one here is refused (409), the handle is removed
 * through the persons API.
 */
export function emailCredentialHooks(directory: PersonDirectory) {
  async function list(orgId: string, personId: string, tx?: Transaction): Promise<PersonCredential[]> {
    // In the deleting transaction when there is one: an embedded database has one connection.
    const person = await directory.get(orgId, personId, tx ? { tx } : undefined);
    if (person?.personType !== 'regular') return [];
    return Promise.all(
      person.handles
        .filter((h) => h.type === 'email_address')
        .map(async (h) => ({
          credentialId: await emailCredentialId(orgId, personId, h.value),
          type: 'otp_via_email',
          name: h.value,
          createdAt: Date.parse(person.createdAt),
          firstFactor: true,
          secondFactor: false,
        })),
    );
  }
  return [
    personCredentials.attach({ run: ({ orgId, personId }) => list(orgId, personId) }),
    deletePersonCredential.attach({
      async run({ orgId, personId, credentialId, tx }) {
        const mine = (await list(orgId, personId, tx)).find(
          (c) => c.credentialId === credentialId.toLowerCase(),
        );
        if (!mine) return undefined;
        throw EmailCodeErrors.CREDENTIAL_IS_HANDLE(
          `credential_id: ${credentialId} is the email address ${mine.name} of the person, a handle: remove the handle from the person (PATCH /persons/${personId}) to stop codes and links to it`,
        );
      },
    }),
    beforePersonDeleted.attach({
      async run({ orgId, personId, tx }) {
        await tx.db
          .delete(emailChallenges)
          .where(and(eq(emailChallenges.orgId, orgId), eq(emailChallenges.personId, personId)));
      },
    }),
  ];
}
