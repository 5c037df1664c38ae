/** A UTF-16 surrogate without its pair: text that no UTF-8 encoder can write faithfully. */
export const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** True when `text` is well-formed Unicode (every surrogate paired). */
export const isWellFormedText = (text: string): boolean => !LONE_SURROGATE.test(text);

/**
 * Why `text` cannot be kept as Postgres text nor carried in an event (jsonb holds neither U+0000 nor a
 * lone surrogate; either fails the write with a 500), or undefined when it can.
 */
export const unstorableTextRule = (text: string): string | undefined =>
  text.includes('\u0000')
    ? 'must not contain the NUL character (\\u0000)'
    : isWellFormedText(text)
      ? undefined
      : 'must be well-formed Unicode (a lone surrogate is not)';

/**
 * True when `text` begins with U+FEFF. The embedded database (PGlite 0.5) decodes each text value it
 * returns with a TextDecoder that drops a leading byte order mark, so such a value reads back without
 * it: names and free text that must round-trip refuse it on write.
 */
export const startsWithBom = (text: string): boolean => text.charCodeAt(0) === 0xfeff;

/** A client's value as a message quotes it: JSON-quoted, cut to its first 64 characters. */
export const quoted = (value: string): string =>
  JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
