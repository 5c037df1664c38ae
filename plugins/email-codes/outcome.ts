import type { EmailCodeOutcome } from '../../core/capabilities/hosted-login-email-codes.ts';
import { ServiceError } from '../../core/errors.ts';

/** A refusal of the API's routes as the hosted login's page shows it; other errors go on. */
export function outcomeOf(error: unknown): EmailCodeOutcome<never> {
  if (!(error instanceof ServiceError) || error.status >= 500) throw error;
  if (error.status === 429) {
    const after = Number(error.headers?.['retry-after'] ?? 60);
    return { ok: false, reason: 'rate_limited', retryAfter: after, message: error.message };
  }
  return { ok: false, reason: 'refused', message: error.message };
}
