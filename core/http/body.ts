import { CoreErrors, ServiceError } from '../errors.ts';
import { errorEnvelope } from './envelope.ts';

const tooLarge = (limit: number) =>
  new ServiceError(413, CoreErrors.BODY_TOO_LARGE, `request body is larger than the limit of ${limit} bytes`);

/**
 * Caps a request body at `limit` bytes, declared or streamed: a declared length above it is refused at
 * once; a stream that passes it errors, and that error reaches the error handler as a 413.
 */
export function limitRequestBody(request: Request, limit: number): Request {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit);
  if (!request.body || declared !== null) return request;
  let seen = 0;
  const counted = request.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > limit) controller.error(tooLarge(limit));
        else controller.enqueue(chunk);
      },
    }),
  );
  return new Request(request, { body: counted, duplex: 'half' } as RequestInit);
}

/** Wraps a fetch handler with the body limit; the refusal is the usual envelope. */
export function withBodyLimit(handle: (request: Request) => Promise<Response>, limit: number) {
  return (request: Request): Promise<Response> => {
    let limited: Request;
    try {
      limited = limitRequestBody(request, limit);
    } catch (e) {
      const err = e as ServiceError;
      return Promise.resolve(Response.json(errorEnvelope(err.status, err.message), { status: err.status }));
    }
    return handle(limited);
  };
}
