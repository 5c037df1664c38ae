import { describe, expect, it } from 'bun:test';
import { styleSourceOf } from '../../../core/http/hosted-page.ts';
import {
  type ConsentPageInput,
  consentPage,
  consentPageHead,
} from '../../../plugins/oauth2-authorize/consent/page.ts';

const input: ConsentPageInput = {
  clientName: 'Evil "App" <script>alert(1)</script>',
  scopes: ['openid', 'email', 'offline_access', 'calendar:<b>write</b>'],
  baseUrl: 'https://ids.example',
  csrfToken: 'tok"><img src=x>',
  signedInAs: 'ada@example.com',
};

/** The texts of the page's list items, tags stripped (the page holds no nested list). */
const items = (html: string) =>
  [...html.matchAll(/<li data-scope="([^"]*)">(.*?)<\/li>/g)].map((m) => [
    m[1],
    m[2]!.replace(/<[^>]+>/g, ''),
  ]);

describe('the consent page', () => {
  it('names the client and lists the scopes asked, describing the standard ones', () => {
    const html = consentPage(input);
    expect(html).toContain(
      '<h1>Allow Evil &quot;App&quot; &lt;script&gt;alert(1)&lt;/script&gt; access to your account?</h1>',
    );
    expect(items(html)).toEqual([
      ['openid', 'Know who you are (your account identifier)'],
      ['email', 'See your email address'],
      ['offline_access', 'Keep access when you are not using it'],
      ['calendar:&lt;b&gt;write&lt;/b&gt;', 'calendar:&lt;b&gt;write&lt;/b&gt;'],
    ]);
    expect(html).toContain('Signed in as ada@example.com');
  });

  it('escapes every value: no markup of the input reaches the page', () => {
    const html = consentPage(input);
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<img src=x>');
    expect(html).not.toContain('<b>write');
    expect(html).toContain('name="csrf_token" value="tok&quot;&gt;&lt;img src=x&gt;"');
  });

  it('posts csrf_token and decision allow or deny in one form to the consent endpoint', () => {
    const html = consentPage(input);
    const forms = [...html.matchAll(/<form [^>]*>/g)].map((m) => m[0]);
    expect(forms).toEqual([
      '<form class="decision" method="post" action="https://ids.example/oauth2/authorize/consent">',
    ]);
    const buttons = [
      ...html.matchAll(/<button type="submit" name="decision" value="(\w+)"[^>]*>(\w+)<\/button>/g),
    ];
    expect(buttons.map((b) => [b[1], b[2]])).toEqual([
      ['allow', 'Allow'],
      ['deny', 'Deny'],
    ]);
  });

  it('shows the logo of an http(s) URL only, and the CSP allows its origin and the stylesheets by hash', async () => {
    const ui = { logoUrl: 'https://cdn.example/logo.png?a=1&b="2"', pageBackgroundColor: '#f4f1ea' };
    const { head, sources } = await consentPageHead({ clientName: 'App', ui });
    const html = consentPage({ ...input, ui }, head);
    expect(html).toContain(
      '<img class="logo" src="https://cdn.example/logo.png?a=1&amp;b=&quot;2&quot;" alt="">',
    );
    expect(sources.images).toEqual(['https://cdn.example']);
    const styles = [...html.matchAll(/<style>(.*?)<\/style>/g)].map((m) => m[1]!);
    // The shell's stylesheet is allowed by pageStyleSource; every other one the page holds is in `sources`.
    const own = await Promise.all(styles.slice(1).map(styleSourceOf));
    expect(own.sort()).toEqual([...(sources.styles ?? [])].sort());
    expect(own).toHaveLength(2);

    const scripted = consentPage({ ...input, ui: { logoUrl: 'javascript:alert(1)' } });
    expect(scripted).not.toContain('<img');
  });

  it('says what the client asks when it asks no scope', () => {
    const html = consentPage({ ...input, clientName: 'Plain', scopes: [] });
    expect(html).toContain('<p>Plain asks to sign you in.</p>');
    expect(html).not.toContain('<ul');
  });
});
