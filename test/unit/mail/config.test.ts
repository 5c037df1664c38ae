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

  it('stop a production start without SMTP_URL, naming it, unless MAIL_OUTBOX=true chooses the outbox', () => {
    const production = {
      NODE_ENV: 'production',
      MASTER_KEY: `k1:${btoa('m'.repeat(32))}`,
      PUBLIC_BASE_URL: 'https://id.acme.example',
    };
    expect(problemsOf(production)).toEqual([
      'SMTP_URL is required when NODE_ENV=production: password reset and email verification links would reach nobody (set MAIL_OUTBOX=true to keep messages in the development outbox under DATA_DIR/outbox on purpose)',
    ]);
    expect(problemsOf({ ...production, SMTP_URL: '' })[0]).toContain('SMTP_URL is required');
    expect(loadConfig({ ...production, MAIL_OUTBOX: 'true' }).smtpUrl).toBeUndefined();
    expect(loadConfig({ ...production, SMTP_URL: 'smtp://mail.acme.example' }).smtpUrl).toBe(
      'smtp://mail.acme.example',
    );
  });

  it('take MAIL_OUTBOX true or false, and refuse it beside SMTP_URL or false without one', () => {
    expect(problemsOf({ MAIL_OUTBOX: 'yes' })[0]).toBe('MAIL_OUTBOX must be true or false (got "yes")');
    expect(problemsOf({ MAIL_OUTBOX: 'true', SMTP_URL: 'smtp://mail.acme.example' })[0]).toContain(
      'SMTP_URL and MAIL_OUTBOX=true are both set: choose one',
    );
    expect(problemsOf({ MAIL_OUTBOX: 'false' })[0]).toContain('SMTP_URL is required when MAIL_OUTBOX=false');
    expect(loadConfig({ MAIL_OUTBOX: 'false', SMTP_URL: 'smtp://mail.acme.example' }).smtpUrl).toBe(
      'smtp://mail.acme.example',
    );
    // Outside production the outbox stays the default, unasked.
    expect(loadConfig({ NODE_ENV: 'development' }).smtpUrl).toBeUndefined();
  });
});
