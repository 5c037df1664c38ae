import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { styleSourceOf } from '../../../core/http/hosted-page.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { MadePerson } from '../../helpers/identity-service.ts';
import {
  type AuthorizeService,
  authorizationUrl,
  discover,
  openLogin,
  startAuthorizeService,
  submitLogin,
} from './fixture.ts';

let s: AuthorizeService;
let person: MadePerson;
beforeAll(async () => {
  s = await startAuthorizeService({ recordEvents: false });
  person = await s.person();
});
afterAll(() => s.stop());

/** A client with this hosted-UI configuration (PUT through the API), and its page opened. */
async function pageWith(configuration: Record<string, unknown> | undefined) {
  const client = await s.createClient();
  if (configuration) {
    const put = await s.call('PUT', `/oauth2/clients/${client.client_id}/ui-configuration`, {
      body: configuration,
    });
    await expectStatus(put, 201);
  }
  const { url } = await authorizationUrl(await discover(s), client.client_id);
  const opened = await openLogin(url);
  return {
    ...opened,
    clientId: client.client_id,
    csp: opened.page.headers.get('content-security-policy') ?? '',
  };
}

/** The CSP's directive `name`, its sources in order. */
const directive = (csp: string, name: string) =>
  csp
    .split(';')
    .map((d) => d.trim().split(' '))
    .find((d) => d[0] === name)
    ?.slice(1);

/** Fails with the page when `html` lacks `part`. */
function expectIn(html: string, part: string) {
  if (!html.includes(part)) throw new Error(`expected ${JSON.stringify(part)} in the page, got:\n${html}`);
}
function expectNotIn(html: string, part: string) {
  if (html.includes(part)) throw new Error(`expected no ${JSON.stringify(part)} in the page, got:\n${html}`);
}

describe('the hosted login with a client hosted-UI configuration', () => {
  it('without one, looks as before: the client name, every handle type, no image allowed', async () => {
    const { html, csp } = await pageWith(undefined);
    expectIn(html, '<title>Sign in to Acme App</title>');
    expectIn(html, '<label for="handle">Email address, phone number or username</label>');
    expectNotIn(html, '<img');
    expect(directive(csp, 'img-src')).toEqual(["'none'"]);
    expect(directive(csp, 'style-src')).toHaveLength(1);
  });

  it('shows the title, logo, favicon, background and texts, and the CSP allows just those', async () => {
    const { html, csp } = await pageWith({
      pageTitle: 'Welcome to Acme',
      pageBackgroundColor: '#0f172a',
      logoUrl: 'https://cdn.acme.example/logo.png',
      faviconUrl: 'https://static.acme.example:8443/favicon.ico',
      textOverrides: { submit: 'Continue', password_label: 'Passphrase', not_a_key: 'unused' },
    });
    expectIn(html, '<title>Welcome to Acme</title>');
    expectIn(html, '<h1>Welcome to Acme</h1>');
    expectIn(html, '<img class="logo" src="https://cdn.acme.example/logo.png" alt="">');
    expectIn(html, '<link rel="icon" href="https://static.acme.example:8443/favicon.ico">');
    expectIn(html, '<style>body{background:#0f172a}</style>');
    expectIn(html, '<button type="submit">Continue</button>');
    expectIn(html, '<label for="password">Passphrase</label>');
    expectNotIn(html, 'unused');
    expect(directive(csp, 'img-src')).toEqual([
      'https://cdn.acme.example',
      'https://static.acme.example:8443',
    ]);
    expect(directive(csp, 'style-src')?.[1]).toBe(await styleSourceOf('body{background:#0f172a}'));
  });

  it('escapes a title that tries to close the element, and a logo URL with quotes', async () => {
    const { html } = await pageWith({
      pageTitle: '</title><script>alert(1)</script>',
      logoUrl: `https://cdn.acme.example/logo.png?a="b"'c&d=<e>`,
      supportURL: 'https://acme.example/help?q="x"',
    });
    expectNotIn(html, '<script');
    expectIn(html, '<title>&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;</title>');
    expectIn(html, '<h1>&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;</h1>');
    expectIn(html, 'src="https://cdn.acme.example/logo.png?a=&quot;b&quot;&#39;c&amp;d=&lt;e&gt;"');
  });

  it('ignores a colour or URL stored by other means that could break out of the style or the CSP', async () => {
    const client = await s.createClient();
    const bad = {
      pageBackgroundColor: 'red;}body{background:url(https://evil.example/x)',
      logoUrl: 'javascript:x',
    };
    await s.service.ctx.storage.query(
      sql`update oauth2_clients set ui_configuration = ${JSON.stringify(bad)}::jsonb where client_id = ${client.client_id}`,
    );
    const { url } = await authorizationUrl(await discover(s), client.client_id);
    const { html, page } = await openLogin(url);
    expectNotIn(html, 'evil.example');
    expectNotIn(html, 'javascript:');
    expect(directive(page.headers.get('content-security-policy') ?? '', 'img-src')).toEqual(["'none'"]);
  });

  it('shows the support link beside an error only', async () => {
    const opened = await pageWith({
      supportURL: 'https://acme.example/help',
      textOverrides: { help_link: 'Need a hand?' },
    });
    expectNotIn(opened.html, 'acme.example/help');
    const wrong = await submitLogin(s.url, opened, person.handle.value, 'not the password');
    const html = await wrong.clone().text();
    await expectStatus(wrong, 401);
    expectIn(html, 'The handle and password do not match.');
    expectIn(html, '<a href="https://acme.example/help" rel="noreferrer">Need a hand?</a>');
    // The page again is the client's page: its look holds on the error states too.
    expect(directive(wrong.headers.get('content-security-policy') ?? '', 'img-src')).toEqual(["'none'"]);
  });

  it('names only the handle types the client takes, and refuses another type with the usual message', async () => {
    const emailOnly = await pageWith({ handleTypes: ['email_address'] });
    expectIn(emailOnly.html, '<label for="handle">Email address</label>');
    // The person's handle is a username: refused without a password check, as a wrong one is.
    const refused = await submitLogin(s.url, emailOnly, person.handle.value, person.password);
    const html = await refused.clone().text();
    await expectStatus(refused, 401);
    expectIn(html, 'The handle and password do not match.');

    const usernames = await pageWith({ handleTypes: ['username', 'email_address'] });
    expectIn(usernames.html, '<label for="handle">Email address or username</label>');
    await expectStatus(await submitLogin(s.url, usernames, person.handle.value, person.password), 303);
  });

  it('takes a change at once on this replica', async () => {
    const first = await pageWith({ pageTitle: 'Before' });
    expectIn(first.html, '<title>Before</title>');
    await expectStatus(
      await s.call('PUT', `/oauth2/clients/${first.clientId}/ui-configuration`, {
        body: { pageTitle: 'After' },
      }),
      201,
    );
    const { url } = await authorizationUrl(await discover(s), first.clientId);
    expectIn((await openLogin(url)).html, '<title>After</title>');
  });

  it('is not changed by the members it does not use', async () => {
    const plain = await pageWith(undefined);
    const unused = await pageWith({
      dynamicFlowConfig: { a: 1 },
      dynamicFlowEnabled: true,
      showBadge: true,
      storeLastFactor: true,
      themeVars: { '--primary': '#f00' },
      alternativeAuthURL: 'https://acme.example/other',
    });
    const strip = (html: string) => html.replace(/value="[^"]*"/g, 'value=""');
    expect(strip(unused.html)).toBe(strip(plain.html));
    expect(unused.csp).toBe(plain.csp);
  });
});
