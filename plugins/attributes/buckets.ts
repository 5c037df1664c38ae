/** What end users (through the SDK, with their own tokens) may do with a bucket's attributes. */
export type EndUserPermissions = 'no_access' | 'read_only' | 'read_write';
/** Who shares a bucket's attributes: one organization, or every organization of a person pool. */
export type SharingScope = 'organization' | 'person_pool';
/** What the organization's API key may do with a bucket: read and write, or only read. */
export type OrganizationAccess = 'read_write' | 'read_only';

export const END_USER_PERMISSIONS = ['no_access', 'read_only', 'read_write'] as const;

export interface BucketDefinition {
  readonly name: string;
  readonly sharingScope: SharingScope;
  readonly endUserPermissions: EndUserPermissions;
  readonly organizationAccess: OrganizationAccess;
  /** Standard buckets exist for every organization; custom ones are created by an organization. */
  readonly standard: boolean;
}

/** A bucket the deployment adds for every organization (`attributes({ buckets: [...] })`). */
export interface DeclaredBucket {
  name: string;
  /** @default 'no_access' */
  endUserPermissions?: EndUserPermissions;
  /**
   * `read_only`: organizations read it with their API key but only the deployment writes it (through
   * the `attributeStore` capability), for example a plan or entitlements bucket.
   * @default 'read_write'
   */
  organizationAccess?: OrganizationAccess;
}

/**
 * The vendor's standard buckets: named for what end users may do, all of them written by the
 * organization (the reference writes `end_user_read_only` in its own example). Until person pools
 * exist, every organization is a pool of its own, so `person_pool-*` buckets hold that organization's data.
 */
export const STANDARD_BUCKETS: readonly BucketDefinition[] = (
  ['organization', 'person_pool'] as const
).flatMap((scope) =>
  END_USER_PERMISSIONS.map((perm) => ({
    name: `${scope === 'person_pool' ? 'person_pool-' : ''}end_user_${perm}`,
    sharingScope: scope,
    endUserPermissions: perm,
    organizationAccess: 'read_write' as const,
    standard: true,
  })),
);

/** 1 to 64 characters: lower-case letters, digits, `_` and `-`, starting with a letter or digit. */
export const BUCKET_NAME_RE = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** Names under this prefix are the person-pool buckets; an organization creates none of its own. */
const RESERVED_PREFIX = 'person_pool-';

/** Why a name cannot be a custom bucket's, or null when it can. */
export function customNameProblem(name: string): string | null {
  if (!BUCKET_NAME_RE.test(name))
    return `a bucket name is 1 to 64 characters of a-z, 0-9, _ and -, starting with a letter or digit (got ${JSON.stringify(name.slice(0, 80))})`;
  if (name.startsWith(RESERVED_PREFIX)) return `bucket names starting with ${RESERVED_PREFIX} are reserved`;
  return null;
}

/** The buckets every organization has: the standard six and those the deployment declares. */
export function fixedBuckets(declared: readonly DeclaredBucket[]): Map<string, BucketDefinition> {
  const all = new Map(STANDARD_BUCKETS.map((b) => [b.name, b]));
  for (const d of declared) {
    if (!BUCKET_NAME_RE.test(d.name))
      throw new Error(
        `attributes: declared bucket ${JSON.stringify(d.name)} breaks the name rule ${BUCKET_NAME_RE}`,
      );
    if (all.has(d.name))
      throw new Error(`attributes: bucket ${d.name} is declared twice or is a standard bucket`);
    if (d.endUserPermissions && !END_USER_PERMISSIONS.includes(d.endUserPermissions))
      throw new Error(
        `attributes: bucket ${d.name} has an unknown endUserPermissions ${d.endUserPermissions}`,
      );
    if (d.organizationAccess && d.organizationAccess !== 'read_only' && d.organizationAccess !== 'read_write')
      throw new Error(
        `attributes: bucket ${d.name} has an unknown organizationAccess ${d.organizationAccess}`,
      );
    all.set(d.name, {
      name: d.name,
      sharingScope: 'organization',
      endUserPermissions: d.endUserPermissions ?? 'no_access',
      organizationAccess: d.organizationAccess ?? 'read_write',
      standard: true,
    });
  }
  return all;
}
