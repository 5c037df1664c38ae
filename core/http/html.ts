const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * Text or an attribute value made safe for HTML.
 *
 * @example escapeHtml('<b>"Acme" & co</b>') // '&lt;b&gt;&quot;Acme&quot; &amp; co&lt;/b&gt;'
 */
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
