import { CoreErrors } from '../errors.ts';

const tooLarge = (limit: number) => CoreErrors.BODY_TOO_LARGE(limit);

const timedOut = (ms: number) => CoreErrors.REQUEST_TIMEOUT.with({ headers: { connection: 'close' } })(ms);

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
 * Bodies that declare a length up to this are read whole before the app sees them: a buffered body costs
 * a few microseconds, a counting stream tens (measured on Bun: 8 against 23 µs per request), which is
 * most of a small POST such as a token request. Longer bodies stream through the counter.
 */
export const BUFFERED_BODY_MAX = 64 * 1024;

/** `work` if it settles within `timeoutMs`; else `stop()` is called and the 408 rejects. */
async function within<T>(work: Promise<T>, timeoutMs: number, stop: () => void): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      stop();
      reject(timedOut(timeoutMs));
    }, timeoutMs);
  });
  try {
    return await Promise.race([work, stalled]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Reads a small declared body whole, within `timeoutMs`: the runtime delivers no more than the declared
 * length, so only the time needs watching. Rejects with the 408 when the body stalls.
 */
async function buffered(request: Request, body: ReadableStream, timeoutMs: number): Promise<AdmittedRequest> {
  const bytes = await within(request.arrayBuffer(), timeoutMs, () => void body.cancel().catch(nothing));
  if (bytes.byteLength === 0) return { request: bodiless(request), settle: nothing };
  // No signal: the body has arrived whole, and reading `signal` makes the runtime build one per request.
  const admitted = new Request(request.url, {
    method: request.method,
    headers: request.headers,
    body: bytes,
  });
  return { request: admitted, settle: nothing };
}

/**
 * The request with no body at all. Runtimes differ on a request that sends none: Bun hands over a null
 * body, Node's and Deno's servers an empty stream, which a JSON route would then fail to parse (a
 * DELETE sent with `content-type: application/json` and nothing else answered 400 there, 204 on Bun).
 * An empty body is no body, on every runtime.
 */
function bodiless(request: Request): Request {
  return new Request(request.url, { method: request.method, headers: request.headers });
}

/**
 * A body of undeclared length (chunked, or a request a runtime built without a length) with its first
 * chunk read, within `timeoutMs`: none at all means no body. Answers the body to stream on, or null.
 */
async function firstChunk(body: ReadableStream<Uint8Array>, timeoutMs: number) {
  const reader = body.getReader();
  const read = () => within(reader.read(), timeoutMs, () => void reader.cancel().catch(nothing));
  let first = await read();
  // Deno hands a request that sent nothing over as a stream of one empty chunk: that is no body either.
  while (!first.done && first.value.byteLength === 0) first = await read();
  if (first.done) return null;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(first.value);
    },
    async pull(controller) {
      const next = await reader.read();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/**
 * Puts a request body under its rules: a declared length above the limit is refused at once (and one
 * that is not a decimal number of bytes is a 400); a stream that passes the limit errors, and a body
 * still incomplete after `timeoutMs` errors too. Those errors reach the error handler as 413 and 408.
 * A small declared body is read whole first, and a body of undeclared length has its first chunk read
 * (each a promise, which rejects with the 408 when it stalls); an empty one leaves the request bodiless.
 */
export function admitBody(request: Request, rules: BodyRules): AdmittedRequest | Promise<AdmittedRequest> {
  const { limit, timeoutMs } = rules;
  const declared = request.headers.get('content-length');
  if (declared !== null) {
    if (!/^\s*\d+\s*$/.test(declared))
      throw CoreErrors.INVALID_CONTENT_LENGTH(
        'header content-length must be a non-negative integer number of bytes',
      );
    if (Number(declared) > limit) throw tooLarge(limit);
  }
  if (!request.body) return { request, settle: nothing };
  if (declared !== null && Number(declared) <= BUFFERED_BODY_MAX)
    return buffered(request, request.body, timeoutMs);
  if (declared === null) {
    const started = performance.now();
    return firstChunk(request.body, timeoutMs).then((body) =>
      body === null
        ? { request: bodiless(request), settle: nothing }
        : counting(request, body, {
            limit,
            timeoutMs: Math.max(1, timeoutMs - (performance.now() - started)),
          }),
    );
  }
  return counting(request, request.body, rules);
}

/** The request with its body streamed through a counter: past `limit` bytes or `timeoutMs` it errors. */
function counting(request: Request, body: ReadableStream<Uint8Array>, rules: BodyRules): AdmittedRequest {
  const { limit, timeoutMs } = rules;
  let seen = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const settle = () => clearTimeout(timer);
  const counted = body.pipeThrough(
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
