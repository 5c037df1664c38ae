import { CoreErrors, ServiceError } from '../errors.ts';

const tooLarge = (limit: number) =>
  new ServiceError(413, CoreErrors.BODY_TOO_LARGE, `request body is larger than the limit of ${limit} bytes`);

/** Refuses early on a declared length above the limit. */
export function checkDeclaredLength(request: Request, limit: number): void {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit);
}

/** Reads a request body as text, stopping (413) as soon as it passes the limit, declared or not. */
export async function readBodyText(request: Request, limit: number): Promise<string> {
  checkDeclaredLength(request, limit);
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(all);
  } catch {
    throw new ServiceError(400, CoreErrors.INVALID_JSON, 'request body is not valid UTF-8');
  }
}

/** Parses JSON and form bodies with the size cap; other types are left to the framework. */
export async function parseBody(request: Request, contentType: string, limit: number): Promise<unknown> {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json' || type.endsWith('+json')) {
    const text = await readBodyText(request, limit);
    if (text.trim() === '')
      throw new ServiceError(400, CoreErrors.INVALID_JSON, 'request body is empty; a JSON value is required');
    try {
      return JSON.parse(text);
    } catch (e) {
      throw new ServiceError(
        400,
        CoreErrors.INVALID_JSON,
        `request body is not valid JSON: ${(e as Error).message}`,
      );
    }
  }
  if (type === 'application/x-www-form-urlencoded') {
    return Object.fromEntries(new URLSearchParams(await readBodyText(request, limit)));
  }
  return undefined;
}
