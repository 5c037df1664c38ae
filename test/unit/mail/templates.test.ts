import { afterEach, describe, expect, it } from 'bun:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../../core/config.ts';
import { templateFilesIn } from '../../../core/messaging/template-files.ts';
import { prepareTemplate } from '../../../core/messaging/templates.ts';
import { probeTemplate } from '../../helpers/mail.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A template folder holding these files. */
function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'templates-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const values = { organization: 'Acme & <Co>', link: 'https://ids.test/r?token=a&b=1', note: 'x\ny' };

/** The problems a ConfigError lists, or fails when the call does not throw one. */
function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  throw new Error('expected a ConfigError');
}

describe('message templates', () => {
  it('render the built-ins, escaping values in HTML only and keeping the subject on one line', () => {
    const m = prepareTemplate({ ...probeTemplate, subject: '{{note}} from {{organization}}' })(values);
    expect(m.subject).toBe('x y from Acme & <Co>');
    expect(m.text).toContain('Hello from Acme & <Co>.');
    expect(m.text).toContain('Follow https://ids.test/r?token=a&b=1');
    expect(m.html).toContain('Hello from Acme &amp; &lt;Co&gt;.');
    expect(m.html).toContain('href="https://ids.test/r?token=a&amp;b=1"');
  });

  it('take the files of MAIL_TEMPLATES_DIR that exist and the built-ins for the rest', () => {
    const dir = folder({
      'probe.subject.txt': '  Your {{ organization }} link\n',
      'probe.html': '<p>Open <a href="{{link}}">{{organization}}</a></p>',
    });
    const m = prepareTemplate(probeTemplate, templateFilesIn(dir))(values);
    expect(m.subject).toBe('Your Acme & <Co> link');
    expect(m.html).toBe('<p>Open <a href="https://ids.test/r?token=a&amp;b=1">Acme &amp; &lt;Co&gt;</a></p>');
    expect(m.text).toContain('Hello from Acme & <Co>.');
  });

  it('refuse at start an override with an unknown placeholder, without the link, or on two lines', () => {
    const dir = folder({
      'probe.txt': 'Hi {{first_name}}, no link here',
      'probe.subject.txt': 'one\ntwo',
    });
    const problems = problemsOf(() => prepareTemplate(probeTemplate, templateFilesIn(dir)));
    expect(problems).toEqual([
      'MAIL_TEMPLATES_DIR/probe.subject.txt must be one line',
      'MAIL_TEMPLATES_DIR/probe.txt uses {{first_name}}, which probe does not have (it has {{organization}}, {{link}}, {{note}})',
      'MAIL_TEMPLATES_DIR/probe.txt must use {{link}}',
    ]);
  });

  it.each([
    ['an image by URL (a tracking pixel)', '<img src="https://track.example/p.gif" width="1">'],
    ['a protocol-relative image', "<img src='//cdn.example/logo.png'>"],
    ['a CSS background by URL', '<td style="background:url(https://cdn.example/bg.png)">'],
    ['a stylesheet link', '<link rel="stylesheet" href="https://cdn.example/x.css">'],
  ])('refuse an HTML override that loads %s', (_, html) => {
    const dir = folder({ 'probe.html': `<p><a href="{{link}}">go</a></p>${html}` });
    const problems = problemsOf(() => prepareTemplate(probeTemplate, templateFilesIn(dir)));
    expect(problems).toEqual([
      'MAIL_TEMPLATES_DIR/probe.html loads something from elsewhere (an image, stylesheet or frame by URL): messages carry no external images or tracking pixels',
    ]);
  });

  it('stop start-up when MAIL_TEMPLATES_DIR names no directory', () => {
    expect(problemsOf(() => templateFilesIn('/nonexistent/templates'))).toEqual([
      'MAIL_TEMPLATES_DIR must name a directory (/nonexistent/templates is none)',
    ]);
  });
});
