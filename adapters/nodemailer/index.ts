export { createDevOutbox, type DevOutboxOptions, type OutboxEntry } from './dev-outbox.ts';
export { classifySmtpError, createSmtpMessenger, type SmtpOptions } from './smtp.ts';
