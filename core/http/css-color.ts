// A CSS colour from a small grammar, so that a value an organization sets can go into a page's
// stylesheet as it is: none of its forms has a character that could end a declaration, a rule or the
// <style> element (no ; } < > " ' \ or white space outside the parentheses).

/** The named colours accepted: CSS's basic colours, a few greys and `transparent`. Others: use hex. */
export const NAMED_COLORS: ReadonlySet<string> = new Set([
  'black',
  'silver',
  'gray',
  'grey',
  'white',
  'maroon',
  'red',
  'purple',
  'fuchsia',
  'green',
  'lime',
  'olive',
  'yellow',
  'navy',
  'blue',
  'teal',
  'aqua',
  'orange',
  'whitesmoke',
  'gainsboro',
  'lightgray',
  'lightgrey',
  'darkgray',
  'darkgrey',
  'transparent',
]);

const HEX = /^#(?:[0-9a-f]{3}|[0-9a-f]{4}|[0-9a-f]{6}|[0-9a-f]{8})$/i;
const RGB = /^rgba?\((\d{1,3}), ?(\d{1,3}), ?(\d{1,3})(?:, ?(0|1|0?\.\d{1,3}|1\.0{1,3}|\d{1,3}%))?\)$/i;

/** The rule a colour must follow, said once for every refusal. */
export const CSS_COLOR_RULE =
  'must be a CSS colour: #rgb, #rgba, #rrggbb, #rrggbbaa, rgb(r, g, b), rgba(r, g, b, a) with r, g, b 0 to 255 and a 0 to 1 or a percentage, or one of the names ' +
  [...NAMED_COLORS].join(', ');

/**
 * True when `value` is a colour of the grammar above.
 *
 * @example isCssColor('#1d4ed8') // true; isCssColor('red;}body{x') // false
 */
export function isCssColor(value: string): boolean {
  if (value.length > 32) return false;
  if (HEX.test(value) || NAMED_COLORS.has(value.toLowerCase())) return true;
  const rgb = RGB.exec(value);
  if (!rgb) return false;
  const channels = [rgb[1], rgb[2], rgb[3]].map(Number);
  const alpha = rgb[4];
  const alphaOk = alpha === undefined || !alpha.endsWith('%') || Number(alpha.slice(0, -1)) <= 100;
  return channels.every((c) => c <= 255) && alphaOk;
}
