import { ConfigError } from '../config.ts';
import { escapeHtml } from '../http/html.ts';

/**
 * A message's templates: a subject, a plain-text body and an HTML body with `{{name}}` placeholders.
 * The plugin that sends the message defines it; a deployment may replace any of the three with files
 * in MAIL_TEMPLATES_DIR named `<name>.subject.txt`, `<name>.txt` and `<name>.html`.
 */
export interface MessageTemplate<V extends string = string> {
  /** Kebab-case; names the override files and the message kind in logs. */
  readonly name: string;
  /** The placeholders the template may use. */
  readonly variables: readonly V[];
  /** Placeholders every body must use (an override without the link is refused at start). */
  readonly required: readonly V[];
  readonly subject: string;
  readonly text: string;
  readonly html: string;
}

/** The rendered subject and bodies. */
export interface RenderedMessage {
  subject: string;
  text: string;
  html: string;
}

/** Fills a template: values are escaped in the HTML body, and line breaks are removed from the subject. */
export type TemplateRenderer<V extends string> = (values: Readonly<Record<V, string>>) => RenderedMessage;

/** Reads an override file of the deployment's template folder: its text, or undefined when there is none. */
export type TemplateFiles = (file: string) => string | undefined;

/**
 * Declares a message's templates (the placeholders typed from `variables`).
 *
 * @example
 * export const welcome = defineMessageTemplate({
 *   name: 'welcome', variables: ['organization', 'link'], required: ['link'],
 *   subject: 'Welcome to {{organization}}', text: 'Start here: {{link}}', html: '<p><a href="{{link}}">Start here</a></p>',
 * });
 */
export const defineMessageTemplate = <const V extends string>(template: MessageTemplate<V>) => template;

const PLACEHOLDER = /\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}/g;
// What would make a mail client fetch something from elsewhere when the message is opened: an image, a
// stylesheet or a frame by URL (tracking pixels are such images). Inline content is left alone.
const EXTERNAL =
  /\b(?:src|srcset|background|poster|data)\s*=\s*["']?\s*(?:https?:)?\/\/|url\(\s*["']?\s*(?:https?:)?\/\/|@import\b|<link\b|<iframe\b|<object\b|<embed\b/i;

function check(template: MessageTemplate, part: 'subject' | 'text' | 'html', body: string, where: string) {
  const problems: string[] = [];
  const used = [...body.matchAll(PLACEHOLDER)].map((m) => m[1]!);
  const unknown = [...new Set(used.filter((u) => !template.variables.includes(u)))];
  if (unknown.length)
    problems.push(
      `${where} uses ${unknown.map((u) => `{{${u}}}`).join(', ')}, which ${template.name} does not have (it has ${template.variables.map((x) => `{{${x}}}`).join(', ')})`,
    );
  if (part !== 'subject') {
    const missing = template.required.filter((r) => !used.includes(r));
    if (missing.length) problems.push(`${where} must use ${missing.map((m) => `{{${m}}}`).join(', ')}`);
  } else if (/[\r\n]/.test(body.trim())) problems.push(`${where} must be one line`);
  if (part === 'html' && EXTERNAL.test(body))
    problems.push(
      `${where} loads something from elsewhere (an image, stylesheet or frame by URL): messages carry no external images or tracking pixels`,
    );
  return problems;
}

const fill = (body: string, values: Readonly<Record<string, string>>, encode: (s: string) => string) =>
  body.replace(PLACEHOLDER, (_, name: string) => encode(values[name] ?? ''));

/**
 * A template ready to render: the deployment's override files where there are some, checked (unknown
 * placeholders, a missing required one, a multi-line subject, external images in HTML are a
 * ConfigError that stops start-up, naming the file), else the built-in text.
 */
export function prepareTemplate<V extends string>(
  template: MessageTemplate<V>,
  files: TemplateFiles = () => undefined,
): TemplateRenderer<V> {
  const parts = { subject: 'subject.txt', text: 'txt', html: 'html' } as const;
  const chosen = { subject: template.subject, text: template.text, html: template.html };
  const problems: string[] = [];
  for (const [part, ext] of Object.entries(parts) as [keyof typeof parts, string][]) {
    const file = `${template.name}.${ext}`;
    const override = files(file);
    if (override !== undefined) {
      problems.push(...check(template, part, override, `MAIL_TEMPLATES_DIR/${file}`));
      chosen[part] = part === 'subject' ? override.trim() : override;
    } else problems.push(...check(template, part, chosen[part], `the built-in ${file}`));
  }
  if (problems.length) throw new ConfigError(problems);
  return (values) => ({
    subject: fill(chosen.subject, values, (s) => s.replace(/[\r\n]+/g, ' ')),
    text: fill(chosen.text, values, (s) => s),
    html: fill(chosen.html, values, escapeHtml),
  });
}
