/**
 * The kinds of value a setting takes: how its text is checked and read, the rule a wrong value breaks
 * (the words after the variable's name in a start-up message), and how the reference writes it.
 */
export interface SettingKind<T, O = T> {
  /** What a message says after the variable's name: `must be an integer from 1 to 720`. */
  readonly rule: string;
  /** The rule as the configuration reference writes it: `an integer from 1 to 720`. */
  readonly doc: string;
  ok(text: string): boolean;
  parse(text: string): T;
  /** A value as the environment writes it (`10/50`, `true`), for the reference's default column. */
  show(value: T): string;
  /** What is wrong with a value given as a plugin option, named by `option`; undefined when it is fine. */
  optionProblem(option: string, value: unknown): string | undefined;
  /** The value an option gives, when the option may give part of it (the rest from `fallback`). */
  fromOption?(option: O, fallback: T): T;
}

/** A rate as `<per minute>/<burst>`, such as `10/50`: two integers from 1 to 1,000,000. */
export interface Rate {
  perMinute: number;
  burst: number;
}

/** A value as a message may show it: quoted, and cut at 200 characters. */
export const shown = (value: unknown) => {
  const text = String(value);
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text);
};

const isInteger = (n: unknown, min: number, max: number): boolean =>
  typeof n === 'number' && Number.isInteger(n) && n >= min && n <= max;

/** An integer from `min` to `max`, written in decimal digits. */
export const integer = (min: number, max: number): SettingKind<number> => {
  const doc = `an integer from ${min} to ${max}`;
  return {
    rule: `must be ${doc}`,
    doc,
    ok: (s) => /^\d{1,15}$/.test(s) && Number(s) >= min && Number(s) <= max,
    parse: Number,
    show: String,
    optionProblem: (option, n) =>
      isInteger(n, min, max) ? undefined : `${option} must be ${doc} (got ${n})`,
  };
};

/** `<per minute>/<burst>`: two integers from 1 to 1000000. */
const rateKind: SettingKind<Rate> = {
  rule: 'must be <events a minute>/<burst>, two integers from 1 to 1000000 (such as 10/50)',
  doc: 'a rate',
  ok: (s) =>
    /^\d{1,7}\/\d{1,7}$/.test(s) && s.split('/').every((n) => Number(n) >= 1 && Number(n) <= 1_000_000),
  parse: (s) => {
    const [perMinute = 0, burst = 0] = s.split('/').map(Number);
    return { perMinute, burst };
  },
  show: (r) => `${r.perMinute}/${r.burst}`,
  optionProblem: (option, r) => {
    for (const [k, n] of Object.entries(r as Rate))
      if (!isInteger(n, 1, 1_000_000))
        return `${option}.${k} must be an integer from 1 to 1000000 (got ${n})`;
    return undefined;
  },
};

/** A rate: `<per minute>/<burst>`, two integers from 1 to 1000000. */
export const rate = (): SettingKind<Rate> => rateKind;

/** A rate whose option may give either number alone, the other then the default's. */
export const partialRate = (): SettingKind<Rate, Partial<Rate>> => ({
  ...rateKind,
  fromOption: (option, fallback) => ({ ...fallback, ...option }),
});

/** `true` or `false`. */
export const flag = (): SettingKind<boolean> => ({
  rule: 'must be true or false',
  doc: '`true` or `false`',
  ok: (s) => s === 'true' || s === 'false',
  parse: (s) => s === 'true',
  show: String,
  optionProblem: (option, b) =>
    typeof b === 'boolean' ? undefined : `${option} must be true or false (got ${b})`,
});

/** One of a few words; `rule` when the message words them otherwise (`development, production or test`). */
export const oneOf = <const W extends string>(words: readonly W[], rule?: string): SettingKind<W> => ({
  rule: rule ?? `must be one of ${words.join(', ')}`,
  doc: `one of ${words.map((w) => `\`${w}\``).join(', ')}`,
  ok: (s) => (words as readonly string[]).includes(s),
  parse: (s) => s as W,
  show: String,
  optionProblem: (option, w) =>
    (words as readonly unknown[]).includes(w)
      ? undefined
      : `${option} must be one of ${words.join(', ')} (got ${w})`,
});

/** Text that `ok` accepts; `rule` is what a message says it must be (`must be a directory path`). */
export const text = (rule: string, ok: (s: string) => boolean, doc?: string): SettingKind<string> => ({
  rule,
  doc: doc ?? rule.replace(/^must (be|name) /, ''),
  ok,
  parse: (s) => s,
  show: (s) => s,
  optionProblem: (option, s) => (typeof s === 'string' && ok(s) ? undefined : `${option} ${rule} (got ${s})`),
});
