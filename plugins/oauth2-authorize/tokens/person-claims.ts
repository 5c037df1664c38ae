import type { PersonRecord } from '../../../core/capabilities/person-directory.ts';
import type { JsonValue } from '../../../core/ports/event-bus.ts';
import type { ClaimsRequest } from '../authorize/oidc-params.ts';

/** The person's members this service answers (userinfo, and ID tokens when the `claims` parameter asks). */
export const PERSON_CLAIMS = [
  'email',
  'email_verified',
  'phone_number',
  'phone_number_verified',
  'username',
] as const;
export type PersonClaim = (typeof PERSON_CLAIMS)[number];

const SCOPE_CLAIMS: Readonly<Record<string, readonly PersonClaim[]>> = {
  email: ['email', 'email_verified'],
  phone: ['phone_number', 'phone_number_verified'],
  username: ['username'],
};

const isPersonClaim = (name: string): name is PersonClaim =>
  (PERSON_CLAIMS as readonly string[]).includes(name);

/** The members a scope grants (OIDC Core §5.4: email, phone; and this service's username). */
export const claimsOfScope = (scope: readonly string[]): PersonClaim[] =>
  scope.flatMap((s) => SCOPE_CLAIMS[s] ?? []);

/** The person members the `claims` parameter asks for at `where` (others are not this service's). */
export const claimsAsked = (
  claims: ClaimsRequest | undefined,
  where: 'id_token' | 'userinfo',
): PersonClaim[] => Object.keys(claims?.[where] ?? {}).filter(isPersonClaim);

/** The values of the named members the person has (a member without a handle is left out). */
export function personClaims(person: PersonRecord, names: readonly PersonClaim[]): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = {};
  const handle = (type: string) => person.handles.find((h) => h.type === type);
  const email = handle('email_address');
  const phone = handle('phone_number');
  const username = handle('username');
  for (const name of new Set(names)) {
    if (name === 'email' && email) out.email = email.value;
    if (name === 'email_verified' && email) out.email_verified = email.verified;
    if (name === 'phone_number' && phone) out.phone_number = phone.value;
    if (name === 'phone_number_verified' && phone) out.phone_number_verified = phone.verified;
    if (name === 'username' && username) out.username = username.value;
  }
  return out;
}
