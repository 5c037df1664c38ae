import { describe, expect, it } from 'bun:test';
import { ConfigError, loadConfig } from '../../../core/config.ts';

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  return [];
};

describe('mail settings', () => {
  it('take an smtp:// or smtps:// SMTP_URL and never show its password in a refusal', () => {
    expect(loadConfig({ SMTP_URL: 'smtp://u:p@mail.example.com:587' }).smtpUrl).toBe(
      'smtp://u:p@mail.example.com:587',
    );
    const [problem] = problemsOf({ SMTP_URL: 'http://robot:hunter2@mail.example.com' });
    expect(problem).toContain('SMTP_URL must be an smtp:// (STARTTLS where offered) or smtps:// (TLS) URL');
    expect(problem).not.toContain('hunter2');
  });

  it('send from no-reply at the public host unless MAIL_FROM says otherwise', () => {
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://id.acme.example' }).mailFrom).toBe(
      'no-reply@id.acme.example',
    );
    expect(loadConfig({}).mailFrom).toBe('no-reply@localhost');
    expect(loadConfig({ MAIL_FROM: 'accounts@acme.example' }).mailFrom).toBe('accounts@acme.example');
    expect(problemsOf({ MAIL_FROM: 'Acme <a@b.c>' })[0]).toContain('MAIL_FROM must be an email address');
  });

  it('retry refused messages for an hour unless MAIL_RETRY_WINDOW_MINUTES says otherwise', () => {
    expect(loadConfig({}).mailRetryWindowMs).toBe(3_600_000);
    expect(loadConfig({ MAIL_RETRY_WINDOW_MINUTES: '5' }).mailRetryWindowMs).toBe(300_000);
    expect(problemsOf({ MAIL_RETRY_WINDOW_MINUTES: '0' })[0]).toContain(
      'MAIL_RETRY_WINDOW_MINUTES must be an integer from 1 to 1440',
    );
  });
});
