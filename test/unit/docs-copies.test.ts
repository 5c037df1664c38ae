import { describe, expect, it } from 'bun:test';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dir, '..', '..');
const SHARED = join(ROOT, '..', 'shared');

/** docs/ keeps verbatim copies of the project's shared documents, so a clone alone has them. */
const COPIES: Array<[copy: string, source: string]> = [
  ['docs/spec/identity-service-interface.md', 'spec/identity-service-interface.md'],
  ['docs/api-contract.md', 'API.md'],
  ['docs/bounds.md', 'BOUNDS.md'],
];

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

  it('sends no reader to ../shared from the README, docs/ or BENCHMARKS.md', () => {
    const files = [
      'README.md',
      'BENCHMARKS.md',
      'docs/README.md',
      'docs/writing-a-plugin.md',
      'docs/writing-an-sso-provider.md',
    ];
    for (const f of files) expect(readFileSync(join(ROOT, f), 'utf8'), f).not.toContain('../shared');
    expect(readdirSync(join(ROOT, 'docs'))).toContain('api-contract.md');
  });
});
