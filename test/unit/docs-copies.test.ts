import { describe, expect, it } from 'bun:test';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dir, '..', '..');
const SHARED = join(ROOT, '..', 'shared');

/** The vendor's OpenAPI documents the interface follows, kept beside it in docs/spec/reference/. */
const REFERENCE = [
  'oauth2.openapi.yml',
  'oidc-discovery.openapi.yml',
  'organization-attributes.openapi.yml',
  'organization-sso-config.openapi.yml',
  'organization-webhooks.openapi.yml',
  'persons.openapi.yml',
  'tokens.openapi.yml',
];

/** docs/ keeps verbatim copies of the project's shared documents, so a clone alone has them. */
const COPIES: Array<[copy: string, source: string]> = [
  ['docs/spec/identity-service-interface.md', 'spec/identity-service-interface.md'],
  ['docs/api-contract.md', 'API.md'],
  ['docs/bounds.md', 'BOUNDS.md'],
  ...REFERENCE.map((f): [string, string] => [`docs/spec/reference/${f}`, `spec/reference/${f}`]),
];

/** Every Markdown document of the repository a reader opens (not the vendored package's). */
const documents = (): string[] => {
  const docs = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? docs(`${dir}/${e.name}`) : e.name.endsWith('.md') ? [`${dir}/${e.name}`] : [],
    );
  return [...readdirSync(ROOT).filter((f) => f.endsWith('.md')), ...docs('docs')];
};

describe('the documents a clone carries', () => {
  it.each(COPIES)(
    '%s is a current copy of the shared %s (checked where ../shared exists)',
    (copy, source) => {
      const text = readFileSync(join(ROOT, copy), 'utf8');
      expect(text.length).toBeGreaterThan(1000);
      const upstream = join(SHARED, source);
      if (existsSync(upstream))
        expect(text === readFileSync(upstream, 'utf8'), `${copy} is stale: copy ${upstream} again`).toBe(
          true,
        );
    },
  );

  it('holds every reference document the shared spec has (checked where ../shared exists)', () => {
    const upstream = join(SHARED, 'spec', 'reference');
    expect(readdirSync(join(ROOT, 'docs/spec/reference')).sort()).toEqual(REFERENCE);
    if (existsSync(upstream)) expect(readdirSync(upstream).sort()).toEqual(REFERENCE);
  });

  it('sends no reader to ../shared from any document', () => {
    const files = documents();
    expect(files).toEqual(expect.arrayContaining(['README.md', 'BENCHMARKS.md', 'docs/guides/README.md']));
    for (const f of files) expect(readFileSync(join(ROOT, f), 'utf8'), f).not.toContain('../shared');
    expect(readdirSync(join(ROOT, 'docs'))).toContain('api-contract.md');
  });
});
