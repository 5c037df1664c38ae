import * as v from 'valibot';
import type { Env } from '../config.ts';
import { integer, type Rate, rate, type SettingKind, shown } from './setting-kinds.ts';

export {
  flag,
  integer,
  oneOf,
  partialRate,
  type Rate,
  rate,
  type SettingKind,
  text,
} from './setting-kinds.ts';

/**
 * A plugin's settings from the environment: a valibot object whose keys are variable names, each an
 * optional string piped to its value. Problems name the variable and the rule, as core's own do.
 *
 * @example
 * const settings = v.object({
 *   GREETING: envText('GREETING', 'must be 1 to 40 characters', (s) => s.length <= 40),
 *   GREETINGS_PER_MINUTE: envInteger('GREETINGS_PER_MINUTE', { min: 1, max: 1000 }),
 * });
 */
export type SettingsSchema<S> = v.GenericSchema<Env, S>;

/**
 * One setting, declared once: its kind (type, bounds, the rule a wrong value breaks), its default, the
 * plugin option it overrides, and the one line the configuration reference shows. Validation, the
 * option's type and docs/configuration.md all come from it.
 */
export interface Setting<T = unknown> {
  readonly kind: SettingKind<T, never>;
  /** The value when neither the variable nor the option is given; absent when unset means something. */
  readonly default?: T;
  /** The default as the reference shows it, when the value alone does not say it (`unset: metrics off`). */
  readonly defaultText?: string;
  /** The plugin option the variable overrides; a dotted path for a nested one (`argon2.memoryKiB`). */
  readonly option?: string;
  /**
   * The option is taken as given, unchecked: for one a test or benchmark sets past the variable's bounds
   * (argon2id at a few KiB). The variable is always checked.
   */
  readonly uncheckedOption?: true;
  /** What it does: the reference's "meaning" column. */
  readonly description: string;
  /** What the reference adds to the kind's rule: how it depends on other settings. */
  readonly note?: string;
  /** The reference's rule in place of the kind's, when the check is made elsewhere. */
  readonly ruleText?: string;
}

/** Settings by variable name. */
export type SettingDeclarations = Readonly<Record<string, Setting>>;

type ValueOf<S> = S extends { kind: SettingKind<infer T, infer _O> } ? T : never;
type OptionValueOf<S> = S extends { kind: SettingKind<infer _T, infer O> } ? O : never;
type OptionAt<P extends string, T> = P extends `${infer Head}.${infer Rest}`
  ? { [K in Head]?: OptionAt<Rest, T> }
  : { [K in P]?: T };
type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void
  ? I
  : never;
type Flatten<T> = { [K in keyof T]: T[K] extends object ? (T[K] extends Rate ? T[K] : Flatten<T[K]>) : T[K] };

/** The options a plugin's declarations take: each declared `option`, typed by its kind, optional. */
export type OptionsOf<D extends SettingDeclarations> = Flatten<
  UnionToIntersection<
    {
      [K in keyof D]: D[K] extends { option: infer P extends string }
        ? OptionAt<P, OptionValueOf<D[K]>>
        : never;
    }[keyof D]
  >
>;

/** The variables as read: each its value, or undefined when unset. */
export type EnvValuesOf<D extends SettingDeclarations> = { [K in keyof D]: ValueOf<D[K]> | undefined };

/** Each setting's value in force: the variable's, else the option's, else the default. */
export type ResolvedOf<D extends SettingDeclarations> = {
  [K in keyof D]: D[K] extends { default: unknown } ? ValueOf<D[K]> : ValueOf<D[K]> | undefined;
};

/** A plugin's declared settings: the schema start-up reads, and what turns variables and options into values. */
export interface DeclaredSettings<D extends SettingDeclarations> {
  /** How the factory's messages name the plugin (`oauth2Authorize: loginTtlSeconds must be ...`). */
  readonly label: string;
  readonly declarations: D;
  readonly schema: SettingsSchema<EnvValuesOf<D>>;
  /** Throws on the first option that breaks its setting's rule, naming the plugin and the option. */
  checkOptions(options: OptionsOf<D>): void;
  resolve(env: EnvValuesOf<D>, options: OptionsOf<D>): ResolvedOf<D>;
}

const optionAt = (options: unknown, path: string): unknown =>
  path
    .split('.')
    .reduce<unknown>(
      (o, key) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[key] : undefined),
      options,
    );

const checkedText = <T>(name: string, kind: SettingKind<T>) =>
  v.pipe(
    v.string(),
    v.check(kind.ok, (i) => `${name} ${kind.rule} (got ${shown(i.input)})`),
  );

/**
 * Declares a plugin's settings once. `label` names the plugin in the factory's messages about its options.
 *
 * @example
 * export const helloSettings = declareSettings('hello', {
 *   GREETINGS_PER_MINUTE: { kind: integer(1, 1000), default: 60, option: 'perMinute', description: 'greetings a minute' },
 * });
 * export type HelloOptions = OptionsOf<typeof helloSettings.declarations>;
 */
export function declareSettings<const D extends SettingDeclarations>(
  label: string,
  declarations: D,
): DeclaredSettings<D> {
  const entries: Record<string, v.GenericSchema<string | undefined, unknown>> = {};
  for (const [name, s] of Object.entries(declarations))
    entries[name] = v.optional(
      v.pipe(
        checkedText(name, s.kind),
        v.transform((t) => s.kind.parse(t)),
      ),
    );
  const schema = Object.assign(v.object(entries), { declared: declarations }) as unknown as SettingsSchema<
    EnvValuesOf<D>
  >;
  return {
    label,
    declarations,
    schema,
    checkOptions(options) {
      for (const s of Object.values(declarations)) {
        if (!s.option || s.uncheckedOption) continue;
        const value = optionAt(options, s.option);
        if (value === undefined) continue;
        const problem = s.kind.optionProblem(s.option, value);
        if (problem) throw new Error(`${label}: ${problem}`);
      }
    },
    resolve(env, options) {
      const out: Record<string, unknown> = {};
      for (const [name, s] of Object.entries(declarations)) {
        const option = s.option === undefined ? undefined : optionAt(options, s.option);
        const fromOption =
          option !== undefined && s.kind.fromOption
            ? s.kind.fromOption(option as never, s.default as never)
            : option;
        out[name] = env[name] ?? fromOption ?? s.default;
      }
      return out as ResolvedOf<D>;
    },
  };
}

/** The declarations behind a plugin's settings schema, when it was made by `declareSettings`. */
export const declarationsOf = (schema: unknown): SettingDeclarations | undefined =>
  (schema as { declared?: SettingDeclarations } | undefined)?.declared;

/** An optional variable checked by `ok`: undefined when unset or empty. */
export const envText = (name: string, rule: string, ok: (s: string) => boolean) =>
  v.optional(
    v.pipe(
      v.string(),
      v.check(ok, (i) => `${name} ${rule} (got ${shown(i.input)})`),
    ),
  );

/** An optional integer variable within bounds. */
export const envInteger = (name: string, bounds: { min: number; max: number }) =>
  v.optional(v.pipe(checkedText(name, integer(bounds.min, bounds.max)), v.transform(Number)));

/** An optional `<per minute>/<burst>` variable. */
export const envRate = (name: string) => {
  const kind = rate();
  return v.optional(v.pipe(checkedText(name, kind), v.transform(kind.parse)));
};

/**
 * Reads a settings schema from the environment. Empty values count as unset, as for core's variables.
 * Returns the settings, or the problems (each naming its variable).
 */
export function readSettings<S>(
  schema: SettingsSchema<S>,
  env: Env,
): { ok: true; settings: S } | { ok: false; problems: string[] } {
  const clean: Env = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined && value !== '') clean[key] = value;
  const parsed = v.safeParse(schema, clean);
  return parsed.success
    ? { ok: true, settings: parsed.output }
    : { ok: false, problems: parsed.issues.map((i) => i.message) };
}
