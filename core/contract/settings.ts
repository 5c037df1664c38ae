import * as v from 'valibot';
import type { Env } from '../config.ts';

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

const shown = (value: unknown) => {
  const text = String(value);
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text);
};

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
  v.optional(
    v.pipe(
      v.string(),
      v.check(
        (s) => /^\d{1,15}$/.test(s) && Number(s) >= bounds.min && Number(s) <= bounds.max,
        (i) => `${name} must be an integer from ${bounds.min} to ${bounds.max} (got ${shown(i.input)})`,
      ),
      v.transform(Number),
    ),
  );

/** A rate as `<per minute>/<burst>`, such as `10/50`: two integers from 1 to 1,000,000. */
export interface Rate {
  perMinute: number;
  burst: number;
}

/** An optional `<per minute>/<burst>` variable. */
export const envRate = (name: string) =>
  v.optional(
    v.pipe(
      v.string(),
      v.check(
        (s) =>
          /^\d{1,7}\/\d{1,7}$/.test(s) && s.split('/').every((n) => Number(n) >= 1 && Number(n) <= 1_000_000),
        (i) =>
          `${name} must be <events a minute>/<burst>, two integers from 1 to 1000000 (such as 10/50) (got ${shown(i.input)})`,
      ),
      v.transform((s): Rate => {
        const [perMinute = 0, burst = 0] = s.split('/').map(Number);
        return { perMinute, burst };
      }),
    ),
  );

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
