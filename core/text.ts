/** A UTF-16 surrogate without its pair: text that no UTF-8 encoder can write faithfully. */
export const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** True when `text` is well-formed Unicode (every surrogate paired). */
export const isWellFormedText = (text: string): boolean => !LONE_SURROGATE.test(text);
