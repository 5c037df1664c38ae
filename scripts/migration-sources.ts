import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(import.meta.dir, '..');
/** Where owners of tables live: core's own modules, adapters, plugins and example plugins. */
const SEARCHED = ['core', 'adapters', 'plugins', 'examples'];

export interface MigrationSource {
  /** The migration set's name (from its generated index.ts, else the folder's name). */
  name: string;
  /** The folder of the generated migrations, relative to the repository. */
  dir: string;
  schema: Record<string, unknown>;
}

/** Folders that own tables: a drizzle `schema.ts` beside a `migrations/` folder, at any depth. */
function owners(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const entries = readdirSync(dir, { withFileTypes: true });
  const here =
    entries.some((e) => e.isFile() && e.name === 'schema.ts') &&
    entries.some((e) => e.isDirectory() && e.name === 'migrations');
  const below = entries
    .filter((e) => e.isDirectory() && e.name !== 'node_modules' && e.name !== 'migrations')
    .flatMap((e) => owners(join(dir, e.name)));
  return here ? [dir, ...below] : below;
}

/**
 * Every drizzle schema that owns tables, found by convention rather than listed here: a plugin or
 * adapter that adds `schema.ts` and a `migrations/` folder is picked up by `npm run db:generate`.
 */
export async function migrationSources(): Promise<MigrationSource[]> {
  const dirs = SEARCHED.flatMap((d) => owners(join(ROOT, d))).sort();
  return Promise.all(
    dirs.map(async (dir) => {
      const index = join(dir, 'migrations', 'index.ts');
      const named = existsSync(index)
        ? /name: '([a-z0-9-]+)'/.exec(readFileSync(index, 'utf8'))?.[1]
        : undefined;
      const schema: Record<string, unknown> = await import(join(dir, 'schema.ts'));
      return { name: named ?? dir.split('/').at(-1)!, dir: relative(ROOT, join(dir, 'migrations')), schema };
    }),
  );
}
