import type { SealedColumn } from '../../../core/db/reseal.ts';
import { type SecretBox, SecretBoxError } from '../../../core/ports/secret-box.ts';
import { AttributeErrors } from '../errors.ts';
import type { PreparedAttribute } from '../limits.ts';
import { createOpenedValues } from './opened-values.ts';

/** The values, when none of them is a promise (sealed at once); undefined otherwise. */
export function allNow<T>(values: ReadonlyArray<T | Promise<T>>): T[] | undefined {
  const out: T[] = [];
  for (const v of values) {
    if (v instanceof Promise) return undefined;
    out.push(v);
  }
  return out;
}

/** Binds a sealed value to its place, so a value copied to another organization, bucket or key does not open. */
const contextOf = (orgId: string, bucket: string, key: string) => `attributes:${orgId}:${bucket}:${key}`;

/** The attribute values, for `secrets reseal`: each bucket row's object of name to sealed value. */
export const attributesSealed: SealedColumn = {
  name: 'attributes.value',
  table: 'attribute_buckets',
  keys: ['org_id', 'name'],
  column: 'attributes',
  map: true,
  context: (row, name) => contextOf(row.org_id!, row.name!, name!),
};

/**
 * Attribute values sealed for their places and opened again, through the box's synchronous members
 * where it has them, with the opened values kept so a value read again is not opened again.
 */
export function createSealing(secrets: SecretBox, openedValuesBytes?: number) {
  const opened = createOpenedValues(openedValuesBytes);
  // The box's synchronous members, where it has them (local keys): no promise per value.
  const sealNow = secrets.sealNow?.bind(secrets);
  const openNow = secrets.openNow?.bind(secrets);

  /** A bucket's values sealed for their places; at once where the box can, each kept as opened. */
  function seal(orgId: string, bucket: string, attrs: PreparedAttribute[]): string[] | Promise<string[]> {
    const sealOne = (a: PreparedAttribute): string | Promise<string> => {
      const context = contextOf(orgId, bucket, a.key);
      const keep = (sealed: string) => {
        opened.set(context, sealed, a.json);
        return sealed;
      };
      return sealNow ? keep(sealNow(a.json, context)) : secrets.seal(a.json, context).then(keep);
    };
    const sealed = attrs.map(sealOne);
    return allNow(sealed) ?? Promise.all(sealed);
  }

  const unreadable = (cause: unknown, key: string, bucket: string) => {
    const why =
      cause instanceof SecretBoxError && cause.code === 'UNKNOWN_KEY'
        ? cause.message
        : 'altered at rest, or sealed for another place';
    return AttributeErrors.VALUE_UNREADABLE.with({ cause })(key, bucket, why);
  };

  /** A value's plaintext: kept from before, or opened (at once where the box can) and kept. */
  function plaintextOf(orgId: string, bucket: string, key: string, sealed: string): string | Promise<string> {
    const context = contextOf(orgId, bucket, key);
    const kept = opened.get(context, sealed);
    if (kept !== undefined) return kept;
    const keep = (plaintext: string) => {
      opened.set(context, sealed, plaintext);
      return plaintext;
    };
    if (!openNow)
      return secrets.open(sealed, context).then(keep, (cause: unknown) => {
        throw unreadable(cause, key, bucket);
      });
    try {
      return keep(openNow(sealed, context));
    } catch (cause) {
      throw unreadable(cause, key, bucket);
    }
  }

  return { seal, plaintextOf };
}
