import { describe, expect, it } from 'bun:test';
import { checkTargetUrl } from '../../../plugins/webhooks/api/target-url.ts';

/** A host of exactly 253 characters: three labels of 63 and one of 61. */
const LONGEST_HOST = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;

describe('target_url rules', () => {
  it.each([
    ['https://hooks.example.com/events', 'https://hooks.example.com/events'],
    ['https://hooks.example.com', 'https://hooks.example.com/'],
    ['HTTPS://Hooks.EXAMPLE.com:443/a/b', 'https://hooks.example.com/a/b'],
    ['https://hooks.example.com:8443/x', 'https://hooks.example.com:8443/x'],
    ['https://intranet/x', 'https://intranet/x'],
    ['https://127.0.0.1.nip.io/x', 'https://127.0.0.1.nip.io/x'],
    ['https://localhost.example.com/x', 'https://localhost.example.com/x'],
    ['  https://hooks.example.com/trimmed  ', 'https://hooks.example.com/trimmed'],
    // The root's trailing dot names the same host: stored without it, so uniqueness sees one URL.
    ['https://hooks.example.com./x', 'https://hooks.example.com/x'],
    ['https://Hooks.Example.COM.:8443/x', 'https://hooks.example.com:8443/x'],
    ['https://hooks.example.com%2e/x', 'https://hooks.example.com/x'],
    ['https://bücher.example/x', 'https://xn--bcher-kva.example/x'],
    ['https://a-b--c.example/x', 'https://a-b--c.example/x'],
    [`https://${'a'.repeat(63)}.example/`, `https://${'a'.repeat(63)}.example/`],
    [`https://${LONGEST_HOST}/`, `https://${LONGEST_HOST}/`],
  ])('accepts %s as %s', (input, normalised) => {
    expect(checkTargetUrl(input)).toEqual({ ok: true, url: normalised });
  });

  it.each([
    ['http://hooks.example.com/', 'must use https'],
    ['ftp://hooks.example.com/', 'must use https'],
    ['hooks.example.com/x', 'absolute https URL'],
    ['', 'must not be empty'],
    ['https://', 'absolute https URL'],
    ['https://user:pw@hooks.example.com/', 'credentials'],
    ['https://hooks.example.com/?', 'query'],
    ['https://hooks.example.com/?a=1', 'query'],
    ['https://hooks.example.com/#', 'fragment'],
    ['https://hooks.example.com/#top', 'fragment'],
    ['https://hooks.example.com/?a#b', 'query'],
    // The parser reads these as https://x/...: the text itself must name the host.
    ['https:///hooks.example.com/x', 'must name its host right after https://'],
    ['https:/hooks.example.com/x', 'must name its host right after https://'],
    ['https:hooks.example.com/x', 'must name its host right after https://'],
    ['https:\\\\hooks.example.com\\x', 'must name its host right after https://'],
    ['https://hooks.example.com:0/x', 'must not use port 0'],
    ['https://hooks.example.com:00/x', 'must not use port 0'],
    ['https://a..example.com/x', 'must not have an empty label'],
    ['https://.example.com/x', 'must not have an empty label'],
    ['https://hooks.example.com../x', 'must not have an empty label'],
    ['https://*.example.com/x', 'letters, digits and hyphens'],
    ['https://a_b.example.com/x', 'letters, digits and hyphens'],
    ['https://-a.example.com/x', 'letters, digits and hyphens'],
    ['https://a-.example.com/x', 'letters, digits and hyphens'],
    ['https://a!b.example.com/x', 'letters, digits and hyphens'],
    [`https://${'a'.repeat(64)}.example/`, 'labels of at most 63 characters'],
    [`https://a${LONGEST_HOST}/`, 'host of at most 253 characters'],
    // The parser drops tabs and newlines anywhere silently: refused rather than read as another URL.
    ['https://hooks.exa\tmple.com/x', 'control characters'],
    ['https://hooks.example.com/x\ny', 'control characters'],
  ])('refuses %s (%s)', (input, problem) => {
    const r = checkTargetUrl(input);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problem).toContain(problem);
  });

  it('refuses a URL longer than 2048 characters', () => {
    expect(checkTargetUrl(`https://hooks.example.com/${'a'.repeat(2100)}`)).toMatchObject({
      ok: false,
      problem: expect.stringContaining('at most 2048'),
    });
  });

  it.each([
    'https://localhost/',
    'https://LOCALHOST/',
    'https://LocalHost:8443/x',
    'https://localhost./',
    'https://LOCALHOST./x',
    'https://a.localhost/',
    'https://deep.sub.LOCALHOST./',
    'https://localhost../',
    'https://a.localhost.../x',
    'https://localhost%2e./',
    'https://ｌｏｃａｌｈｏｓｔ/',
  ])('refuses localhost spelled %s', (input) => {
    const r = checkTargetUrl(input);
    expect(r).toMatchObject({ ok: false });
    if (!r.ok) expect(r.problem).toContain('localhost');
  });

  it.each([
    'https://127.0.0.1/',
    'https://127.0.0.1./x',
    'https://127.0.0.1../x',
    'https://127.1/',
    'https://2130706433/',
    'https://0x7f000001/',
    'https://0x7f.1/',
    'https://0177.0.0.1/',
    'https://0/',
    'https://1.1.1.1/',
    'https://8.8.8.8:443/',
    'https://[::1]/',
    'https://[0:0:0:0:0:0:0:1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[::ffff:7f00:1]/',
    'https://[0:0:0:0:0:ffff:7f00:1]/',
    'https://[2001:db8::1]/',
    'https://[fe80::1]:8443/x',
    'https://１２７.０.０.１/',
  ])('refuses the IP literal %s', (input) => {
    const r = checkTargetUrl(input);
    expect(r).toMatchObject({ ok: false });
    if (!r.ok) expect(r.problem).toContain('IP address');
  });

  it('refuses a zone id, which WHATWG URL parsing does not accept', () => {
    expect(checkTargetUrl('https://[fe80::1%25eth0]/').ok).toBe(false);
  });
});
