import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import definition from '../service.config.ts';
import { renderConfiguration } from './docs-configuration.ts';

/** `npm run docs`: writes docs/configuration.md's tables from the settings' declarations. */
const path = join(import.meta.dir, '..', 'docs', 'configuration.md');
const page = readFileSync(path, 'utf8');
const written = renderConfiguration(page, definition.plugins);
if (written === page) console.log('docs/configuration.md is up to date');
else {
  writeFileSync(path, written);
  console.log('wrote docs/configuration.md');
}
