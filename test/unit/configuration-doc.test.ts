import { describe, expect, it } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderConfiguration } from '../../scripts/docs-configuration.ts';
import definition from '../../service.config.ts';
import { coreSettingNames, deploymentPluginSettings, sourceSettingNames } from '../helpers/settings-read.ts';

const ROOT = join(import.meta.dir, '..', '..');
const DOC = readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8');

/** The other pages: the README and docs/, this reference aside. */
const otherPages = (): Array<{ path: string; text: string }> => {
  const walk = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
    );
  return ['README.md', ...walk('docs')]
    .filter((path) => path !== join('docs', 'configuration.md'))
    .map((path) => ({ path, text: readFileSync(join(ROOT, path), 'utf8') }));
};

/** Settings other work is adding: documented ahead of the code that reads them. None now. */
const BEING_ADDED: string[] = [];

/** The variables a reference documents: the first cell of each table row, in backticks. */
const documentedIn = (doc: string): string[] =>
  [...doc.matchAll(/^\|\s*`([A-Z][A-Z0-9_]+)`\s*\|/gm)].map((m) => m[1]!);

const missingFrom = (doc: string, names: Iterable<string>): string[] => {
  const documented = new Set(documentedIn(doc));
  return [...names].filter((n) => !documented.has(n)).sort();
};

describe('docs/configuration.md', () => {
  it("holds the tables `npm run docs` writes from the settings' declarations", () => {
    const written = renderConfiguration(DOC, definition.plugins);
    if (written !== DOC) {
      const at = [...written].findIndex((c, i) => c !== DOC[i]);
      throw new Error(
        `docs/configuration.md is stale: run \`npm run docs\` (first difference: ${JSON.stringify(DOC.slice(at, at + 120))})`,
      );
    }
  });

  it('rewrites a table edited by hand, and only the tables', () => {
    const edited = DOC.replace(/^\|\s*`PORT`.*$/m, '| `PORT` | `8080` | anything | edited by hand |');
    expect(edited).not.toBe(DOC);
    expect(renderConfiguration(edited, definition.plugins)).toBe(DOC);
    expect(DOC.match(/<!-- settings:/g)?.length).toBeGreaterThanOrEqual(6);
  });

  it('lists every variable core reads (the keys loadConfig looks up)', () => {
    const names = coreSettingNames();
    // The recorder sees the schema: without these it would pass on nothing.
    expect(names).toEqual(expect.arrayContaining(['PORT', 'MASTER_KEY', 'DATABASE_URL', 'CLIENT_IP_HEADER']));
    expect(missingFrom(DOC, names)).toEqual([]);
  });

  it('lists every variable each plugin of the default deployment reads', () => {
    const plugins = deploymentPluginSettings();
    expect(plugins.find((p) => p.plugin === 'password')?.names).toContain('PASSWORD_RESET_TTL_MINUTES');
    const missing = plugins.flatMap(({ plugin, names }) =>
      missingFrom(DOC, names).map((n) => `${n} (${plugin})`),
    );
    expect(missing).toEqual([]);
  });

  it('lists every variable the source reads by name (process.env, env.X, envText/envInteger/envRate)', () => {
    const found = sourceSettingNames();
    expect(found.get('NODE_EXTRA_CA_CERTS')).toBe('adapters/fetch-delivery/bun-transport.ts');
    expect(found.get('PORT')).toBe('scripts/healthcheck.ts');
    const missing = missingFrom(DOC, found.keys()).map((n) => `${n} (read in ${found.get(n)})`);
    expect(missing).toEqual([]);
  });

  it('fails on a reference that leaves a variable out', () => {
    const withoutPort = DOC.replace(/^\|\s*`PORT`.*$/m, '');
    expect(missingFrom(withoutPort, coreSettingNames())).toEqual(['PORT']);
  });

  it('documents nothing the code does not read, but the settings being added', () => {
    const read = new Set([
      ...coreSettingNames(),
      ...deploymentPluginSettings().flatMap((p) => p.names),
      ...sourceSettingNames().keys(),
    ]);
    const unread = documentedIn(DOC).filter((n) => !read.has(n));
    expect(unread.filter((n) => !BEING_ADDED.includes(n))).toEqual([]);
  });

  it('documents each variable once', () => {
    const names = documentedIn(DOC);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
  });

  it('is the one table of settings: no other page restates one', () => {
    const restated = otherPages().flatMap(({ path, text }) =>
      documentedIn(text).map((n) => `${n} (a table row in ${path})`),
    );
    expect(restated).toEqual([]);
  });

  it('is where the README sends a reader for settings', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain('docs/configuration.md');
  });

  it('is the one table of settings: the README, the guides and operating.md name settings and link here', () => {
    const docs = [
      'README.md',
      'docs/operating.md',
      ...readdirSync(join(ROOT, 'docs/guides')).map((f) => `docs/guides/${f}`),
    ];
    expect(docs.length).toBeGreaterThan(10);
    for (const f of docs) expect(documentedIn(readFileSync(join(ROOT, f), 'utf8')), f).toEqual([]);
    expect(documentedIn('| `PORT` | `3000` | ... |')).toEqual(['PORT']);
  });
});
