import { CoreErrors } from '../errors.ts';

const tooLarge = (limit: number) => CoreErrors.BODY_TOO_LARGE(limit);

/**
 * Caps a request body at `limit` bytes, declared or streamed: a declared length above it is refused at
 * once (and one that is not a decimal number of bytes is a 400); a stream that passes it errors, and
 * that error reaches the error handler as a 413.
 */
export function limitRequestBody(request: Request, limit: number): Request {
  const declared = request.headers.get('content-length');
  if (declared !== null) {
    if (!/^\s*\d+\s*$/.test(declared))
      throw CoreErrors.INVALID_CONTENT_LENGTH(
        'header content-length must be a non-negative integer number of bytes',
      );
    if (Number(declared) > limit) throw tooLarge(limit);
  }
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
