import { CORE_SETTINGS, type CoreSetting } from '../core/config-schema.ts';
import { declarationsOf, type Setting, type SettingDeclarations } from '../core/contract/settings.ts';
import type { ServiceDefinition } from '../core/plugin.ts';

/**
 * docs/configuration.md's tables, written from the settings' declarations. The page's prose is written by
 * hand; each table sits between `<!-- settings:<block> -->` and `<!-- /settings -->`, where `<block>` is a
 * group of core's (`server`, `storage`, ...) or `plugin <id>`, and is replaced whole.
 */
export function renderConfiguration(page: string, plugins: ServiceDefinition['plugins']): string {
  let blocks = 0;
  const written = page.replace(
    /(<!-- settings:([a-z0-9 -]+) -->\n)[\s\S]*?(<!-- \/settings -->)/g,
    (_, open: string, block: string, close: string) => {
      blocks++;
      return `${open}${renderBlock(block, plugins)}${close}`;
    },
  );
  const markers = page.match(/<!-- settings:/g)?.length ?? 0;
  if (markers !== blocks)
    throw new Error(
      `docs/configuration.md: ${markers - blocks} settings marker(s) without a block this script reads`,
    );
  return written;
}

function renderBlock(block: string, plugins: ServiceDefinition['plugins']): string {
  const [kind, id] = block.split(' ');
  if (kind === 'plugin') {
    const plugin = plugins.find((p) => p.id === id);
    const declared = declarationsOf(plugin?.settings);
    if (!declared) throw new Error(`docs/configuration.md: no plugin ${id} with declared settings`);
    return table(declared, pluginDefault);
  }
  const group = Object.fromEntries(
    Object.entries(CORE_SETTINGS as Record<string, CoreSetting>).filter(([, s]) => s.group === kind),
  );
  if (!Object.keys(group).length) throw new Error(`docs/configuration.md: no settings in group ${kind}`);
  return table(group, coreDefault);
}

const HEADER = '| variable | default | rule | meaning |\n|---|---|---|---|\n';

function table(declared: SettingDeclarations, defaultOf: (s: Setting) => string): string {
  const rows = Object.entries(declared).map(([name, s]) => {
    const rule = (s.ruleText ?? s.kind.doc) + (s.note ? `; ${s.note}` : '');
    return `| \`${name}\` | ${defaultOf(s)} | ${rule} | ${s.description} |\n`;
  });
  return HEADER + rows.join('');
}

const shownDefault = (s: Setting): string =>
  s.defaultText ?? (s.default === undefined ? 'none' : `\`${s.kind.show(s.default as never)}\``);

const coreDefault = shownDefault;
const pluginDefault = (s: Setting): string =>
  s.option ? `${shownDefault(s)} (option \`${s.option}\`)` : shownDefault(s);
