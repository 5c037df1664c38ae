import { describe, expect, it } from 'bun:test';
import { createOpenedValues } from '../../plugins/attributes/store/opened-values.ts';

// An entry counts two bytes a character of its sealed text, context and plaintext.
const entryBytes = (sealed: string, context: string, plaintext: string) =>
  2 * (sealed.length + context.length + plaintext.length);

describe('the opened-values cache of attributes', () => {
  it('answers a sealed text only for the context it was opened for', () => {
    const cache = createOpenedValues(1024 * 1024);
    cache.set('attributes:o:b:card', 'sb1.k.AAAA', '"4111"');
    expect(cache.get('attributes:o:b:card', 'sb1.k.AAAA')).toBe('"4111"');
    expect(cache.get('attributes:o:b:other', 'sb1.k.AAAA')).toBeUndefined();
    expect(cache.get('attributes:o:b:card', 'sb1.k.AAAB')).toBeUndefined();
  });

  it('keeps nothing with a bound of 0, and never a value of more than a sixteenth of the bound', () => {
    const off = createOpenedValues(0);
    off.set('c', 's', 'p');
    expect(off.get('c', 's')).toBeUndefined();
    expect(off.stats()).toEqual({ values: 0, bytes: 0 });
    const small = createOpenedValues(1600);
    small.set('c', 'big', 'x'.repeat(100)); // 2 * 104 = 208 bytes > 1600 / 16
    expect(small.get('c', 'big')).toBeUndefined();
    expect(() => createOpenedValues(-1)).toThrow('0 for none');
  });

  it('stays within its bound, dropping what was used least recently', () => {
    const bound = 4000;
    const cache = createOpenedValues(bound);
    const size = entryBytes('s000', 'ctx', 'p'.repeat(40));
    for (let i = 0; i < 200; i++) {
      const sealed = `s${String(i).padStart(3, '0')}`;
      cache.set('ctx', sealed, 'p'.repeat(40));
      // s000 is read after every write: used most recently each time, it is never dropped.
      expect(cache.get('ctx', 's000')).toBe('p'.repeat(40));
      expect(cache.stats().bytes).toBeLessThanOrEqual(bound);
    }
    expect(cache.get('ctx', 's001')).toBeUndefined();
    expect(cache.get('ctx', 's199')).toBe('p'.repeat(40));
    // At least half the bound stays in use once it has filled.
    expect(cache.stats().values).toBeGreaterThanOrEqual(Math.floor(bound / 2 / size));
  });
});

describe('attributes({ openedValuesBytes })', () => {
  it('takes 0 or a whole number of bytes, and refuses anything else when the service is defined', async () => {
    const { attributes } = await import('../../plugins/attributes/index.ts');
    expect(() => attributes({ openedValuesBytes: 0 })).not.toThrow();
    expect(() => attributes({ openedValuesBytes: 1.5 })).toThrow(
      'attributes: openedValuesBytes must be an integer from 0 to 4294967296 (got 1.5)',
    );
    expect(() => attributes({ openedValuesBytes: -1 })).toThrow('openedValuesBytes');
  });
});
