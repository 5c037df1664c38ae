const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's `x-request-id` when it is sane (1 to 128 of `A-Za-z0-9._:-`), a fresh UUID otherwise. */
export function requestIdOf(headers: Headers): string {
  const given = headers.get('x-request-id');
  return given && REQUEST_ID_RE.test(given) ? given : crypto.randomUUID();
}
