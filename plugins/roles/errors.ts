import { defineErrors, detail, type ErrorCodeOf } from '../../core/errors.ts';

/** Names a message lists at most; a list of 1000 unknown names would make a 130 KB message. */
const MAX_NAMED = 10;
const quoted = (names: readonly string[]) => {
  const shown = names
    .slice(0, MAX_NAMED)
    .map((n) => JSON.stringify(n))
    .join(', ');
  return names.length > MAX_NAMED ? `${shown} and ${names.length - MAX_NAMED} more` : shown;
};

/** The error codes of the roles plugin: stable, machine-readable, each with one HTTP status. */
export const RoleErrors = defineErrors({
  /** A name, description, list or path parameter breaks its rule. */
  INVALID_ROLES_INPUT: { status: 400, message: detail },
  /** A list names permissions the organization does not have. */
  UNKNOWN_PERMISSIONS: {
    status: 400,
    message: (where: string, names: readonly string[]) =>
      `${where}: no permission ${quoted(names)} in this organization; create ${names.length > 1 ? 'them' : 'it'} first with POST /permissions`,
  },
  /** A list names roles the organization does not have. */
  UNKNOWN_ROLES: {
    status: 400,
    message: (where: string, names: readonly string[]) =>
      `${where}: no role ${quoted(names)} in this organization; create ${names.length > 1 ? 'them' : 'it'} first with POST /roles`,
  },
  PERMISSION_NOT_FOUND: {
    status: 404,
    message: (name: string) => `no permission ${JSON.stringify(name)} in this organization`,
  },
  ROLE_NOT_FOUND: {
    status: 404,
    message: (name: string) => `no role ${JSON.stringify(name)} in this organization`,
  },
  /** No person of that ID in this organization (another organization's person included). */
  PERSON_NOT_FOUND: {
    status: 404,
    message: (id: string) => `no person ${JSON.stringify(id)} in this organization`,
  },
  PERMISSION_EXISTS: {
    status: 409,
    message: (name: string) =>
      `body.name: the permission ${JSON.stringify(name)} already exists in this organization`,
  },
  ROLE_EXISTS: {
    status: 409,
    message: (name: string) =>
      `body.name: the role ${JSON.stringify(name)} already exists in this organization`,
  },
});

export type RoleErrorCode = ErrorCodeOf<typeof RoleErrors>;
