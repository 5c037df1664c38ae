/** What a ServiceError may carry beyond its message: the error it wraps, and response headers. */
export interface ServiceErrorOptions {
  cause?: unknown;
  /** Headers of the error response, such as `retry-after` on a 429. */
  headers?: Record<string, string>;
}

/**
 * A failure the client should see: a stable machine-readable `code`, the HTTP status, and a message that
 * names what was wrong and where (field, value, limit). One handler turns it into the envelope. Raise it
 * through an error table (`defineErrors`), which fixes each code's status and message in one place.
 *
 * @example throw WebhookErrors.WEBHOOK_NOT_FOUND(id) // a ServiceError<'WEBHOOK_NOT_FOUND'>, status 404
 */
export class ServiceError<C extends string = string> extends Error {
  constructor(
    readonly status: number,
    readonly code: C,
    message: string,
    options?: ServiceErrorOptions,
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ServiceError';
    this.headers = options?.headers;
  }
  readonly headers: Record<string, string> | undefined;
}

/** One entry of an error table: the HTTP status, and the message fixed or built from the throw site's arguments. */
export interface ErrorSpec {
  readonly status: number;
  readonly message: string | ((...args: never[]) => string);
}

type ArgsOf<S extends ErrorSpec> = S['message'] extends (...args: infer A) => string ? A : [];

/** Raises one code: call it with the message's arguments; `.code` and `.status` say what it raises. */
export interface ErrorFactory<C extends string, A extends unknown[]> {
  (...args: A): ServiceError<C>;
  readonly code: C;
  readonly status: number;
  /** The same factory, its errors carrying a cause or response headers. */
  with(options: ServiceErrorOptions): (...args: A) => ServiceError<C>;
}

/** The factories of an error table, one per code. */
export type ErrorTable<T extends Record<string, ErrorSpec>> = {
  readonly [K in keyof T & string]: ErrorFactory<K, ArgsOf<T[K]>>;
};

/** The union of the codes of an error table: `ErrorCodeOf<typeof WebhookErrors>`. */
export type ErrorCodeOf<T> = keyof T & string;

/**
 * Declares a plugin's (or the core's) error codes in one table: each code with its HTTP status and its
 * message. Each entry becomes a factory whose arguments are the message's, typed, so a throw site names
 * a code from the table, never a free string, and cannot give it another status.
 *
 * @example
 * export const WebhookErrors = defineErrors({
 *   WEBHOOK_NOT_FOUND: { status: 404, message: (id: string) => `no webhook ${id} in this organization` },
 * });
 * throw WebhookErrors.WEBHOOK_NOT_FOUND(id);
 * WebhookErrors.WEBHOOK_NOT_FOUND.status; // 404, for the OpenAPI document and tests
 */
export function defineErrors<const T extends Record<string, ErrorSpec>>(table: T): ErrorTable<T> {
  const out: Record<string, unknown> = {};
  for (const [code, spec] of Object.entries(table)) {
    const text = (args: unknown[]) =>
      typeof spec.message === 'string'
        ? spec.message
        : (spec.message as (...a: unknown[]) => string)(...args);
    const make =
      (options?: ServiceErrorOptions) =>
      (...args: unknown[]) =>
        new ServiceError(spec.status, code, text(args), options);
    out[code] = Object.assign(make(), { code, status: spec.status, with: make });
  }
  return out as ErrorTable<T>;
}

/**
 * The message is the detail the throw site gives (the field and the rule): for codes raised with many
 * different messages. `INVALID_INPUT: { status: 400, message: detail }`, then `Errors.INVALID_INPUT(text)`.
 */
export const detail = (message: string) => message;

/** Error codes raised by the core itself; plugins declare theirs in their own `errors.ts`. */
export const CoreErrors = defineErrors({
  ROUTE_NOT_FOUND: {
    status: 404,
    message: (method: string, path: string) => `no route for ${method} ${path}`,
  },
  /** A field breaks its rule; the message names the field and the rule. */
  VALIDATION: { status: 400, message: detail },
  INVALID_JSON: { status: 400, message: detail },
  INVALID_REQUEST_TARGET: { status: 400, message: 'the request target is not a valid URL path' },
  INVALID_CONTENT_LENGTH: { status: 400, message: detail },
  BODY_TOO_DEEP: { status: 400, message: detail },
  BODY_TOO_LARGE: {
    status: 413,
    message: (limit: number) => `request body is larger than the limit of ${limit} bytes`,
  },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: detail },
  /** The body did not arrive within REQUEST_TIMEOUT_MS; raised `.with({ headers: { connection: 'close' } })`. */
  REQUEST_TIMEOUT: {
    status: 408,
    message: (ms: number) =>
      `the request body did not arrive within ${ms} ms (REQUEST_TIMEOUT_MS); send it whole and retry`,
  },
  MISSING_ORG_ID: { status: 400, message: detail },
  MISSING_API_KEY: { status: 401, message: (header: string) => `header ${header} is required` },
  INVALID_API_KEY: { status: 401, message: (header: string) => `the ${header} is not a valid API key` },
  WRONG_ORGANIZATION: {
    status: 403,
    message: (header: string, orgId: string) => `the ${header} does not belong to organization ${orgId}`,
  },
  ORGANIZATION_NOT_FOUND: { status: 404, message: (orgId: string) => `no organization ${orgId}` },
  INVALID_CONSISTENCY: { status: 400, message: detail },
  /** An If-Match header that is not `*` or a list of quoted entity tags. */
  INVALID_IF_MATCH: { status: 400, message: detail },
  /** If-Match names no current ETag of the resource: nothing was written. */
  PRECONDITION_FAILED: { status: 412, message: detail },
  CONSISTENCY_TIMEOUT: { status: 408, message: detail },
  /** Past a rate limit; raise it `.with({ headers: { 'retry-after': ... } })`. */
  RATE_LIMITED: { status: 429, message: detail },
  NOT_READY: { status: 503, message: detail },
  INTERNAL: { status: 500, message: detail },
});

export type CoreErrorCode = ErrorCodeOf<typeof CoreErrors>;
