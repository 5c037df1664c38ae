import { describe, expect, it } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const TEST = join(import.meta.dir, '..');

const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );

describe('the tests themselves', () => {
  it('assert HTTP statuses through expectStatus, which shows the body, never with a bare compare', () => {
    // `expect(res.status).toBe(201)` fails with "expected 201, received 400" and no body to say why.
    const bare = /expect\(\(?[\w.()[\]'"`, /:{}-]*?\.status\)\.(toBe|toEqual)\(\s*\d{3}\s*\)/;
    const offenders = files(TEST)
      .filter((f) => !f.endsWith('test-style.test.ts'))
      .flatMap((f) =>
        readFileSync(f, 'utf8')
          .split('\n')
          .flatMap((line, i) => (bare.test(line) ? [`${relative(TEST, f)}:${i + 1}: ${line.trim()}`] : [])),
      );
    expect(offenders).toEqual([]);
  });
});
