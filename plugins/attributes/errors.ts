import { ServiceError } from '../../core/errors.ts';

/** Error codes of the attributes plugin: stable, machine-readable, each raised with the status beside it. */
export const AttributeErrors = {
  /** 400: the body is not an object of attributes, or an attribute breaks a limit. */
  INVALID_ATTRIBUTES: 'INVALID_ATTRIBUTES',
  /** 400: the names to read or delete are unclear: a bad or unknown query parameter, or a body on DELETE. */
  INVALID_NAMES: 'INVALID_NAMES',
  /** 400: the write would leave more attributes in a bucket than it may hold. */
  BUCKET_FULL: 'BUCKET_FULL',
  /** 400: a custom bucket's name or settings break the rules. */
  INVALID_BUCKET: 'INVALID_BUCKET',
  /** 400: the organization already has as many custom buckets as it may. */
  TOO_MANY_BUCKETS: 'TOO_MANY_BUCKETS',
  /** 403: the organization may read this bucket but not write it (or not delete it). */
  BUCKET_READ_ONLY: 'BUCKET_READ_ONLY',
  /** 403: a standard bucket exists for every organization and cannot be deleted. */
  BUCKET_STANDARD: 'BUCKET_STANDARD',
  /** 403: the bucket belongs to another organization. */
  BUCKET_OF_ANOTHER_ORGANIZATION: 'BUCKET_OF_ANOTHER_ORGANIZATION',
  /** 404: no bucket of this name exists for the organization. */
  BUCKET_NOT_FOUND: 'BUCKET_NOT_FOUND',
  /** 409: a bucket of this name already exists for the organization. */
  BUCKET_EXISTS: 'BUCKET_EXISTS',
  /** 500: a stored value does not open: altered at rest, or sealed for another place. */
  VALUE_UNREADABLE: 'VALUE_UNREADABLE',
} as const;

/** A name as it appears in a message: quoted, and cut to its first 64 characters when longer than 80. */
export function shown(name: string): string {
  if (name.length <= 80) return JSON.stringify(name);
  const points = Array.from(name);
  return JSON.stringify(points.length > 80 ? `${points.slice(0, 64).join('')}…` : name);
}

export const bucketNotFound = (name: string) =>
  new ServiceError(
    404,
    AttributeErrors.BUCKET_NOT_FOUND,
    `no attribute bucket ${shown(name)} in this organization`,
  );

export const bucketOfAnotherOrganization = (name: string) =>
  new ServiceError(
    403,
    AttributeErrors.BUCKET_OF_ANOTHER_ORGANIZATION,
    `attribute bucket ${shown(name)} belongs to another organization; this organization may not use it`,
  );

export const bucketReadOnly = (name: string, what = 'written') =>
  new ServiceError(
    403,
    AttributeErrors.BUCKET_READ_ONLY,
    `attribute bucket ${shown(name)} is read-only for this organization: it may be read, not ${what}`,
  );

export const standardBucket = (name: string) =>
  new ServiceError(
    403,
    AttributeErrors.BUCKET_STANDARD,
    `attribute bucket ${shown(name)} is a standard bucket: it exists for every organization and cannot be deleted (DELETE /organizations/attributes/${name} empties it)`,
  );
