import { describe, expect, it } from 'bun:test';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

const ROOT = join(import.meta.dir, '..', '..');

/** Every Markdown document a reader opens: the repository's own, not the vendored package's. */
function documents(): string[] {
  const under = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? under(`${dir}/${e.name}`) : e.name.endsWith('.md') ? [`${dir}/${e.name}`] : [],
    );
  return [
    ...readdirSync(ROOT).filter((f) => f.endsWith('.md')),
    ...under('docs'),
    'vendor/postgres/PATCHED.md',
  ];
}

/** The text a reader sees, without code: links in code are not links. */
const prose = (text: string) => text.replace(/^ *```[\s\S]*?^ *```$/gm, '').replace(/`[^`\n]*`/g, '``');

/** GitHub's anchors: the heading's text, lower-cased, punctuation but `-` and `_` dropped, spaces `-`. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of text.replace(/^ *```[\s\S]*?^ *```$/gm, '').matchAll(/^#{1,6} +(.+?) *#* *$/gm)) {
    const visible = m[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/[`*]/g, '');
    const slug = visible
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

/** The relative links of a document: `[text](target)`, outside code. */
const links = (text: string) =>
  [...prose(text).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t));

describe('the links of the documents', () => {
  const files = documents();

  it('finds the documents and their links', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'CONTRIBUTING.md', 'docs/guides/persons.md']));
    expect(links(readFileSync(join(ROOT, 'README.md'), 'utf8')).length).toBeGreaterThan(20);
  });

  it('computes anchors as GitHub does', () => {
    expect([
      ...anchors(
        '# A first sign-in\n## The `token_minted` hook\n## OAuth 2.0: client_credentials grants\n## A first sign-in',
      ),
    ]).toEqual([
      'a-first-sign-in',
      'the-token_minted-hook',
      'oauth-20-client_credentials-grants',
      'a-first-sign-in-1',
    ]);
  });

  it.each(files)('%s links to files that exist, and to headings they have', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const broken: string[] = [];
    for (const link of links(text)) {
      const [path, anchor] = link.split('#') as [string, string | undefined];
      const target = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)));
      if (relative(ROOT, join(ROOT, target)).startsWith('..') || !existsSync(join(ROOT, target))) {
        broken.push(`${link}: no ${target}`);
        continue;
      }
      if (anchor === undefined || !target.endsWith('.md') || statSync(join(ROOT, target)).isDirectory())
        continue;
      if (!anchors(readFileSync(join(ROOT, target), 'utf8')).has(anchor))
        broken.push(`${link}: ${target} has no heading #${anchor}`);
    }
    expect(broken, file).toEqual([]);
  });
});
