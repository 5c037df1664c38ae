import { defineCapability } from '../contract/capabilities.ts';

/**
 * The deployment's own access to organizations' attribute buckets, provided by the attributes plugin:
 * another plugin reads and writes attributes through it, read-only buckets included, never through the
 * plugin's tables.
 */
export interface AttributeStoreApi {
  /** One bucket's attributes (all, or those named that exist); 404 for a bucket the organization lacks. */
  read(orgId: string, bucket: string, names?: string[]): Promise<Record<string, unknown>>;
  /**
   * Writes as the deployment, read-only buckets included, under the same limits as the API.
   * @param mode `replace` (the default) leaves exactly these attributes; `merge` keeps the others.
   */
  write(
    orgId: string,
    bucket: string,
    attributes: Record<string, unknown>,
    mode?: 'replace' | 'merge',
  ): Promise<void>;
}

/** Provided by the attributes plugin; `requires: { attributes: attributeStore }` in another plugin. */
export const attributeStore = defineCapability<AttributeStoreApi>('attributeStore');
