/**
 * A failure the client should see: a stable machine-readable `code`, the HTTP status, and a message that
 * names what was wrong and where (field, value, limit). One handler turns it into the envelope.
 *
 * @example throw new ServiceError(404, 'WEBHOOK_NOT_FOUND', `no webhook ${id} in this organization`)
 */
export class ServiceError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    options?: { cause?: unknown; headers?: Record<string, string> },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ServiceError';
    this.headers = options?.headers;
  }
  readonly headers: Record<string, string> | undefined;
}

export const badRequest = (code: string, message: string) => new ServiceError(400, code, message);
export const notFound = (code: string, message: string) => new ServiceError(404, code, message);
export const conflict = (code: string, message: string) => new ServiceError(409, code, message);

/** Error codes raised by the core itself; plugins declare theirs in their own `errors.ts`. */
export const CoreErrors = {
  ROUTE_NOT_FOUND: 'ROUTE_NOT_FOUND',
  VALIDATION: 'VALIDATION',
  INVALID_JSON: 'INVALID_JSON',
  INVALID_REQUEST_TARGET: 'INVALID_REQUEST_TARGET',
  INVALID_CONTENT_LENGTH: 'INVALID_CONTENT_LENGTH',
  BODY_TOO_DEEP: 'BODY_TOO_DEEP',
  BODY_TOO_LARGE: 'BODY_TOO_LARGE',
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  MISSING_ORG_ID: 'MISSING_ORG_ID',
  MISSING_API_KEY: 'MISSING_API_KEY',
  INVALID_API_KEY: 'INVALID_API_KEY',
  WRONG_ORGANIZATION: 'WRONG_ORGANIZATION',
  INVALID_CONSISTENCY: 'INVALID_CONSISTENCY',
  CONSISTENCY_TIMEOUT: 'CONSISTENCY_TIMEOUT',
  RATE_LIMITED: 'RATE_LIMITED',
  NOT_READY: 'NOT_READY',
  INTERNAL: 'INTERNAL',
} as const;
