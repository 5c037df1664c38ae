import {
  HANDLE_TYPES,
  type HandleType,
  type PersonHandle,
} from '../../core/capabilities/person-directory.ts';
import { PersonErrors } from './errors.ts';

// Local part: RFC 5322 dot-atoms (letters, digits and !#$%&'*+/=?^_`{|}~-, dots between them).
const LOCAL = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
// Domain: two or more labels of letters, digits and inner hyphens, the last not all digits.
const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const PHONE = /^\+[1-9][0-9]{7,14}$/;
const USERNAME = /^[a-z0-9][a-z0-9._-]{0,62}[a-z0-9]$|^[a-z0-9]$/;

export const HANDLE_RULES: Record<HandleType, string> = {
  email_address:
    "an email address local@domain of at most 254 characters: the local part (at most 64) letters, digits, dots between them and !#$%&'*+/=?^_`{|}~-, the domain two or more labels of letters, digits and inner hyphens; compared and stored lower-cased",
  phone_number:
    'an E.164 phone number: + then 8 to 15 digits, the first not 0; spaces, dashes, dots and parentheses are removed',
  username:
    'a username of 1 to 64 letters, digits, dots, underscores and hyphens, starting and ending with a letter or digit; compared and stored lower-cased',
};

function bad(where: string, type: HandleType, value: string): never {
  throw PersonErrors.INVALID_PERSON_INPUT(
    `${where}: must be ${HANDLE_RULES[type]} (got ${JSON.stringify(value.length > 80 ? `${value.slice(0, 64)}…` : value)})`,
  );
}

function email(raw: string, where: string): string {
  const value = raw.trim().toLowerCase();
  const at = value.lastIndexOf('@');
  const local = value.slice(0, at);
  const labels = value.slice(at + 1).split('.');
  const ok =
    at > 0 &&
    value.length <= 254 &&
    local.length <= 64 &&
    LOCAL.test(local) &&
    labels.length >= 2 &&
    labels.every((l) => LABEL.test(l)) &&
    !/^[0-9]+$/.test(labels.at(-1)!);
  return ok ? value : bad(where, 'email_address', raw);
}

function phone(raw: string, where: string): string {
  const value = raw.trim().replace(/[\s\-.()]/g, '');
  return PHONE.test(value) ? value : bad(where, 'phone_number', raw);
}

function username(raw: string, where: string): string {
  const value = raw.trim().toLowerCase();
  return USERNAME.test(value) ? value : bad(where, 'username', raw);
}

/**
 * A handle as stored and compared: the one place handles are normalised. Throws a 400 naming `where`
 * and the rule.
 *
 * @example normaliseHandle({ type: 'email_address', value: ' Ann@Example.COM ' }) // ann@example.com
 * @example normaliseHandle({ type: 'phone_number', value: '+1 (202) 555-0142' }) // +12025550142
 */
export function normaliseHandle(handle: PersonHandle, where = 'handle'): PersonHandle {
  const { type, value } = handle;
  if (typeof value !== 'string') throw PersonErrors.INVALID_PERSON_INPUT(`${where}.value: must be a string`);
  switch (type) {
    case 'email_address':
      return { type, value: email(value, `${where}.value`) };
    case 'phone_number':
      return { type, value: phone(value, `${where}.value`) };
    case 'username':
      return { type, value: username(value, `${where}.value`) };
    default:
      throw PersonErrors.INVALID_PERSON_INPUT(
        `${where}.type: must be one of ${HANDLE_TYPES.join(', ')} (got ${JSON.stringify(type)})`,
      );
  }
}

/** `type:value` as the list filter writes it (`email_address:ann@example.com`), normalised. */
export function parseHandleFilter(text: string, where = 'query.handle'): PersonHandle {
  const colon = text.indexOf(':');
  if (colon < 0)
    throw PersonErrors.INVALID_PERSON_INPUT(
      `${where}: must be type:value, such as email_address:ann@example.com (got ${JSON.stringify(text)})`,
    );
  return normaliseHandle({ type: text.slice(0, colon) as HandleType, value: text.slice(colon + 1) }, where);
}
