import { defineErrors, detail, type ErrorCodeOf } from '../../core/errors.ts';

/** A name as it appears in a message: quoted, and cut to its first 64 characters when longer than 80. */
export function shown(name: string): string {
  if (name.length <= 80) return JSON.stringify(name);
  const points = Array.from(name);
  return JSON.stringify(points.length > 80 ? `${points.slice(0, 64).join('')}…` : name);
}

/** The error codes of the attributes plugin: stable, machine-readable, each with one HTTP status. */
export const AttributeErrors = defineErrors({
  /** The body is not an object of attributes, or an attribute breaks a limit. */
  INVALID_ATTRIBUTES: { status: 400, message: detail },
  /** The names to read or delete are unclear: a bad or unknown query parameter, or a body on DELETE. */
  INVALID_NAMES: { status: 400, message: detail },
  /** The write would leave more attributes in a bucket than it may hold. */
  BUCKET_FULL: { status: 400, message: detail },
  /** A custom bucket's name or settings break the rules. */
  INVALID_BUCKET: { status: 400, message: detail },
  /** The organization already has as many custom buckets as it may. */
  TOO_MANY_BUCKETS: {
    status: 400,
    message: (count: number, max: number) =>
      `this organization has ${count} custom buckets; the limit is ${max}`,
  },
  /** The organization may read this bucket but not write it (or not delete it). */
  BUCKET_READ_ONLY: {
    status: 403,
    message: (name: string, what = 'written') =>
      `attribute bucket ${shown(name)} is read-only for this organization: it may be read, not ${what}`,
  },
  /** A standard bucket exists for every organization and cannot be deleted. */
  BUCKET_STANDARD: {
    status: 403,
    message: (name: string) =>
      `attribute bucket ${shown(name)} is a standard bucket: it exists for every organization and cannot be deleted (DELETE /organizations/attributes/${name} empties it)`,
  },
  /** The bucket belongs to another organization. */
  BUCKET_OF_ANOTHER_ORGANIZATION: {
    status: 403,
    message: (name: string) =>
      `attribute bucket ${shown(name)} belongs to another organization; this organization may not use it`,
  },
  /** No bucket of this name exists for the organization. */
  BUCKET_NOT_FOUND: {
    status: 404,
    message: (name: string) => `no attribute bucket ${shown(name)} in this organization`,
  },
  /** A bucket of this name already exists for the organization. */
  BUCKET_EXISTS: { status: 409, message: detail },
  /** A stored value does not open: altered at rest, or sealed for another place. */
  VALUE_UNREADABLE: {
    status: 500,
    message: (key: string, bucket: string, why: string) =>
      `attribute ${shown(key)} of bucket ${bucket} does not open: ${why}`,
  },
});

export type AttributeErrorCode = ErrorCodeOf<typeof AttributeErrors>;
