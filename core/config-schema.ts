import * as v from 'valibot';
import { CORE_SETTINGS, type CoreSetting } from './config-settings.ts';
import type { SettingKind } from './contract/setting-kinds.ts';

export { CORE_SETTINGS, type CoreSetting, type LogLevel, list } from './config-settings.ts';

/** A wrong value as a message may show it: secrets not at all, URLs without their credentials. */
function shownValue(s: CoreSetting, value: unknown): string {
  if (s.secret) return 'the value is not shown: it is a secret';
  const text = String(value);
  const masked = s.credentials ? text.replace(/\/\/[^/@\s]*@/g, '//***@') : text;
  return `got ${JSON.stringify(masked.length > 200 ? `${masked.slice(0, 200)}…` : masked)}`;
}

type Settings = typeof CORE_SETTINGS;
type Read = { [K in keyof Settings as Settings[K] extends { schema: false } ? never : K]: Settings[K] };
type TextOf<S> = S extends { kind: SettingKind<infer T> } ? (T extends string ? T : string) : string;

/** The environment after EnvSchema: every variable checked, defaults filled in, still text. */
export type EnvSettings = {
  [K in keyof Read]: Read[K] extends { default: unknown } ? TextOf<Read[K]> : TextOf<Read[K]> | undefined;
};

const entries: Record<string, v.GenericSchema<string | undefined, string | undefined>> = {};
for (const [name, s] of Object.entries(CORE_SETTINGS) as [string, CoreSetting][]) {
  if (s.schema === false) continue;
  const checked = v.pipe(
    v.string(),
    v.check(s.kind.ok, (i) => `${name} ${s.kind.rule} (${shownValue(s, i.input)})`),
  );
  entries[name] =
    s.default === undefined ? v.optional(checked) : v.optional(checked, s.kind.show(s.default as never));
}

/** The variables core reads, each with its rule and its default; loadConfig turns them into a Config. */
export const EnvSchema = v.object(entries) as unknown as v.GenericSchema<
  Record<string, string | undefined>,
  EnvSettings
> & { entries: Record<string, unknown> };
