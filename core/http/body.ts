import { badRequest, CoreErrors, ServiceError } from '../errors.ts';

/** The code of a request whose body did not arrive within the request timeout. */
export const REQUEST_TIMEOUT = 'REQUEST_TIMEOUT';

const tooLarge = (limit: number) =>
  new ServiceError(413, CoreErrors.BODY_TOO_LARGE, `request body is larger than the limit of ${limit} bytes`);

const timedOut = (ms: number) =>
  new ServiceError(
    408,
    REQUEST_TIMEOUT,
    `the request body did not arrive within ${ms} ms (REQUEST_TIMEOUT_MS); send it whole and retry`,
    { headers: { connection: 'close' } },
  );

export interface BodyRules {
  /** The largest body in bytes. */
  limit: number;
  /** How long the body may take to arrive, from when the headers were read. */
  timeoutMs: number;
}

/** A request admitted with its body rules, and `settle()` to drop the timer once the answer is out. */
export interface AdmittedRequest {
  request: Request;
  settle(): void;
}

const nothing = () => {};

/**
 * Puts a request body under its rules: a declared length above the limit is refused at once (and one
 * that is not a decimal number of bytes is a 400); a stream that passes the limit errors, and a body
 * still incomplete after `timeoutMs` errors too. Those errors reach the error handler as 413 and 408.
 */
export function admitBody(request: Request, rules: BodyRules): AdmittedRequest {
  const { limit, timeoutMs } = rules;
  const declared = request.headers.get('content-length');
  if (declared !== null) {
    if (!/^\s*\d+\s*$/.test(declared))
      throw badRequest(
        CoreErrors.INVALID_CONTENT_LENGTH,
        'header content-length must be a non-negative integer number of bytes',
      );
    if (Number(declared) > limit) throw tooLarge(limit);
  }
  if (!request.body) return { request, settle: nothing };
  let seen = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const settle = () => clearTimeout(timer);
  const counted = request.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      start(controller) {
        timer = setTimeout(() => controller.error(timedOut(timeoutMs)), timeoutMs);
      },
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > limit) {
          settle();
          controller.error(tooLarge(limit));
        } else controller.enqueue(chunk);
      },
      flush: settle,
    }),
  );
  // Built from parts: Node's server hands over a request object that `new Request(request, init)` refuses.
  const admitted = new Request(request.url, {
    method: request.method,
    headers: request.headers,
    body: counted,
    signal: request.signal,
    duplex: 'half',
  } as RequestInit);
  return { request: admitted, settle };
}
