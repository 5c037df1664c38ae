import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as v from 'valibot';
import { type Env, loadConfig } from '../../core/config.ts';
import type { ServiceDefinition } from '../../core/plugin.ts';
import definition from '../../service.config.ts';

const ROOT = join(import.meta.dir, '..', '..');

/** An environment that records every variable name looked up in it, and holds none. */
function recordingEnv(): { env: Env; names: Set<string> } {
  const names = new Set<string>();
  const env = new Proxy<Env>(
    {},
    {
      get: (_, key) => {
        if (typeof key === 'string') names.add(key);
        return undefined;
      },
      has: (_, key) => {
        if (typeof key === 'string') names.add(key);
        return false;
      },
    },
  );
  return { env, names };
}

/** What core's loadConfig looks up in the environment: every key of its schema, and refused old names. */
export function coreSettingNames(): string[] {
  const { env, names } = recordingEnv();
  loadConfig(env);
  return [...names].filter(isEnvName).sort();
}

/** What a plugin's settings schema looks up, by running it on an environment that records lookups. */
export function pluginSettingNames(plugin: ServiceDefinition['plugins'][number]): string[] {
  if (!plugin.settings) return [];
  const { env, names } = recordingEnv();
  v.safeParse(plugin.settings, env);
  return [...names].filter(isEnvName).sort();
}

/** The plugins of the default deployment (service.config.ts), each with the settings it reads. */
export const deploymentPluginSettings = (): Array<{ plugin: string; names: string[] }> =>
  definition.plugins.map((p) => ({ plugin: p.id, names: pluginSettingNames(p) }));

const isEnvName = (s: string) => /^[A-Z][A-Z0-9_]+$/.test(s);

/** The code of the service: what the server and the admin CLI run (tests, benchmarks and drills aside). */
const SOURCE_DIRS = ['core', 'plugins', 'adapters', 'entry'];
const SOURCE_FILES = ['service.config.ts', 'scripts/cli.ts', 'scripts/cli-bin.mjs', 'scripts/healthcheck.ts'];

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return /\.(ts|mjs|js)$/.test(e.name) && !/\.test\.ts$/.test(e.name) ? [path] : [];
  });

// The ways the source reads a variable: the runtimes' environment objects, a parameter named env, and
// the settings helpers plugins declare theirs with.
const READS = [
  /\bprocess\.env\.([A-Z][A-Z0-9_]+)/g,
  /\bprocess\.env\[\s*['"`]([A-Z][A-Z0-9_]+)['"`]\s*\]/g,
  /\bBun\.env\.([A-Z][A-Z0-9_]+)/g,
  /\bDeno\.env\.get\(\s*['"`]([A-Z][A-Z0-9_]+)['"`]/g,
  /\benv\.([A-Z][A-Z0-9_]+)/g,
  /\benv(?:Text|Integer|Rate)\(\s*['"`]([A-Z][A-Z0-9_]+)['"`]/g,
];

/** Every variable name the service's source reads, found by scanning it, with the first file that does. */
export function sourceSettingNames(): Map<string, string> {
  const files = [
    ...SOURCE_DIRS.flatMap((d) => sourceFiles(join(ROOT, d))),
    ...SOURCE_FILES.map((f) => join(ROOT, f)),
  ];
  const found = new Map<string, string>();
  for (const file of files) {
    // Comments hold examples (`GREETING` in core/contract/settings.ts), not reads.
    const code = readFileSync(file, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/(^|[^:])\/\/.*$/gm, '$1');
    for (const re of READS)
      for (const m of code.matchAll(re)) if (!found.has(m[1]!)) found.set(m[1]!, relative(ROOT, file));
  }
  return found;
}
