import { describe, expect, it } from 'bun:test';
import {
  declareSettings,
  flag,
  integer,
  type OptionsOf,
  oneOf,
  partialRate,
  rate,
  readSettings,
} from '../../core/contract/settings.ts';

const greeter = declareSettings('greeter', {
  GREETINGS_PER_MINUTE: {
    kind: integer(1, 1000),
    default: 60,
    option: 'perMinute',
    description: 'greetings',
  },
  GREETING_RATE: {
    kind: rate(),
    default: { perMinute: 10, burst: 50 },
    option: 'limits.rate',
    description: 'r',
  },
  GREETING_LOUD: { kind: flag(), default: false, option: 'loud', description: 'shout' },
  GREETING_BURSTS: {
    kind: partialRate(),
    default: { perMinute: 5, burst: 9 },
    option: 'bursts',
    description: 'b',
  },
  GREETING_TONE: { kind: oneOf(['warm', 'dry']), default: 'warm', option: 'tone', description: 'tone' },
});
type GreeterOptions = OptionsOf<typeof greeter.declarations>;

describe('a setting declared once', () => {
  it('refuses a wrong variable with a message naming it and its rule', () => {
    const read = readSettings(greeter.schema, {
      GREETINGS_PER_MINUTE: '0',
      GREETING_RATE: '5',
      GREETING_TONE: 'x',
    });
    expect(read).toEqual({
      ok: false,
      problems: [
        'GREETINGS_PER_MINUTE must be an integer from 1 to 1000 (got "0")',
        'GREETING_RATE must be <events a minute>/<burst>, two integers from 1 to 1000000 (such as 10/50) (got "5")',
        'GREETING_TONE must be one of warm, dry (got "x")',
      ],
    });
  });

  it('takes the variable, else the option, else the default', () => {
    const read = readSettings(greeter.schema, { GREETINGS_PER_MINUTE: '7', GREETING_LOUD: 'true' });
    if (!read.ok) throw new Error(read.problems.join('; '));
    const options: GreeterOptions = {
      perMinute: 3,
      limits: { rate: { perMinute: 1, burst: 2 } },
      loud: false,
    };
    expect(greeter.resolve(read.settings, options)).toEqual({
      GREETINGS_PER_MINUTE: 7,
      GREETING_RATE: { perMinute: 1, burst: 2 },
      GREETING_LOUD: true,
      GREETING_BURSTS: { perMinute: 5, burst: 9 },
      GREETING_TONE: 'warm',
    });
  });

  it('fills a rate option that gives one number from the default', () => {
    const read = readSettings(greeter.schema, {});
    if (!read.ok) throw new Error(read.problems.join('; '));
    expect(greeter.resolve(read.settings, { bursts: { burst: 100 } }).GREETING_BURSTS).toEqual({
      perMinute: 5,
      burst: 100,
    });
  });

  it('refuses a wrong option at the factory, naming the plugin and the option', () => {
    expect(() => greeter.checkOptions({ perMinute: 0 })).toThrow(
      'greeter: perMinute must be an integer from 1 to 1000 (got 0)',
    );
    expect(() => greeter.checkOptions({ limits: { rate: { perMinute: 1, burst: 0 } } })).toThrow(
      'greeter: limits.rate.burst must be an integer from 1 to 1000000 (got 0)',
    );
    expect(() => greeter.checkOptions({ perMinute: 1000, tone: 'dry' })).not.toThrow();
  });

  it('types each option by its kind (checked by tsc)', () => {
    const wrong = [
      // @ts-expect-error an integer setting takes a number
      { perMinute: '5' } satisfies GreeterOptions,
      // @ts-expect-error a oneOf setting takes one of its words
      { tone: 'loud' } satisfies GreeterOptions,
      // @ts-expect-error no setting has this option
      { volume: 3 } satisfies GreeterOptions,
    ];
    expect(wrong).toHaveLength(3);
  });
});
