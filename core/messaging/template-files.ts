import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../config.ts';
import type { TemplateFiles } from './templates.ts';

/**
 * The override files of MAIL_TEMPLATES_DIR (read once, at start, as each plugin prepares its
 * templates). A folder that is not there stops start-up: a typo must not silently send the built-ins.
 */
export function templateFilesIn(dir: string | undefined): TemplateFiles {
  if (dir === undefined) return () => undefined;
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new ConfigError([`MAIL_TEMPLATES_DIR must name a directory (${dir} is none)`]);
  return (file) => {
    const path = join(dir, file);
    return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
  };
}
