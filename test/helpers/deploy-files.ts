import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = join(import.meta.dir, '..', '..');

export interface Instruction {
  op: string;
  args: string;
}

/** The Dockerfile's instructions, continuation lines joined and comments dropped, split into stages. */
export function dockerfileStages(text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')): Instruction[][] {
  const lines = text
    .split('\n')
    .filter((l) => !/^\s*#/.test(l))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const stages: Instruction[][] = [];
  for (const line of lines) {
    const [, op = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const instruction = { op: op.toUpperCase(), args: args.replace(/\s+/g, ' ').trim() };
    if (instruction.op === 'FROM') stages.push([]);
    stages.at(-1)?.push(instruction);
  }
  return stages;
}

/** The ENV of a stage as variables (`ENV A=1 B=2` forms), values unquoted. */
export function stageEnv(stage: Instruction[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { op, args } of stage)
    if (op === 'ENV')
      for (const m of args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S*)/g))
        env[m[1]!] = m[2]!.replace(/^"|"$/g, '');
  return env;
}

/** An exec-form argument list (`["a", "b"]`), or undefined for the shell form. */
export function execForm(args: string): string[] | undefined {
  if (!args.startsWith('[')) return undefined;
  const parsed: unknown = JSON.parse(args);
  return Array.isArray(parsed) && parsed.every((a) => typeof a === 'string') ? parsed : undefined;
}

const globToRegExp = (glob: string) =>
  new RegExp(
    `^${glob
      .split(/(\*\*\/?|\*|\?)/)
      .map((part) =>
        part === '**/' || part === '**'
          ? '(?:.*/)?'
          : part === '*'
            ? '[^/]*'
            : part === '?'
              ? '[^/]'
              : part.replace(/[.+^${}()|[\]\\]/g, '\\$&'),
      )
      .join('')}$`,
  );

/**
 * Whether .dockerignore lets a path into the build context, as Docker decides: the last pattern that
 * matches the path or one of its parent folders wins, and `!` lets it in again.
 */
export function dockerContextAdmits(
  path: string,
  ignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8'),
) {
  const patterns = ignore
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const negated = l.startsWith('!');
      const glob = (negated ? l.slice(1) : l).replace(/^\/+|\/+$/g, '');
      return { negated, re: globToRegExp(glob) };
    });
  const parts = path.split('/');
  const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
  let admitted = true;
  for (const { negated, re } of patterns) if (prefixes.some((p) => re.test(p))) admitted = negated;
  return admitted;
}

/**
 * Compose's variable interpolation of one value: `${VAR}`, `${VAR:-default}`, `${VAR-default}` and
 * `${VAR:?error}` (throws the error when VAR is unset or empty), `$$` for a dollar.
 */
export function interpolate(value: string, vars: Record<string, string | undefined>): string {
  return value
    .replace(
      /\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}/g,
      (_, name: string, op?: string, arg?: string) => {
        const v = vars[name];
        const empty = v === undefined || (op?.startsWith(':') && v === '');
        if (op?.endsWith('?') && empty) throw new Error(`${name}: ${arg}`);
        if (op?.endsWith('-') && empty) return arg ?? '';
        return v ?? '';
      },
    )
    .replace(/\$\$/g, '$');
}

/** The variables a value interpolates, with the operator each uses (`:?` required, `:-` defaulted). */
export const interpolated = (value: string): Array<{ name: string; op: string }> =>
  [...value.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)(:?[-?])?/g)].map((m) => ({ name: m[1]!, op: m[2] ?? '' }));

/**
 * What the given entry files import, followed through the repository's own files: those files, and the
 * npm packages imported by name (node: and bun: built-ins aside). Dynamic imports of computed paths
 * (SERVICE_CONFIG's file) are not followed.
 */
export function importGraph(entries: string[]): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const transpilers = {
    ts: new Bun.Transpiler({ loader: 'ts' }),
    js: new Bun.Transpiler({ loader: 'js' }),
  };
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    if (!/\.(ts|mjs|js)$/.test(file)) return;
    const code = readFileSync(join(ROOT, file), 'utf8').replace(/^#!.*/, '');
    const imports = (file.endsWith('.ts') ? transpilers.ts : transpilers.js).scanImports(code);
    // Packages found at run time through createRequire(...).resolve('pkg/...') (the /docs page's assets).
    for (const m of code.matchAll(/\.resolve\(\s*[`'"]((?:@[\w.-]+\/)?[\w.-]+)\//g)) packages.add(m[1]!);
    for (const { path } of imports) {
      if (path.startsWith('.')) {
        const resolved = Bun.resolveSync(path, join(ROOT, file, '..'));
        visit(resolved.slice(ROOT.length + 1));
      } else if (!/^(node|bun):/.test(path) && !isBuiltin(path)) {
        packages.add(path.startsWith('@') ? path.split('/').slice(0, 2).join('/') : path.split('/')[0]!);
      }
    }
  };
  for (const entry of entries) visit(entry);
  return { files: [...files].sort(), packages: [...packages].sort() };
}

const BUILTINS = new Set((await import('node:module')).builtinModules);
const isBuiltin = (name: string) => BUILTINS.has(name.split('/')[0]!);
