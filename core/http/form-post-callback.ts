/** The most parameters a provider's posted answer may carry: code, state, id_token, user, iss, error... */
const MAX_FIELDS = 16;

/**
 * The parameters of a provider's answer posted to a callback (the OAuth 2.0 Form Post Response Mode,
 * which Sign in with Apple uses when it is asked for the name or email), or a problem to show. The
 * callback answers them with `formPostRedirect`: a cross-site POST does not carry the SameSite=Lax
 * cookie that binds a sign-in to its browser, a top-level GET does.
 */
export async function formPostParams(
  request: Request,
): Promise<{ ok: true; params: URLSearchParams } | { ok: false; problem: string }> {
  const type = request.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded')
    return {
      ok: false,
      problem: "the provider's answer must be posted as application/x-www-form-urlencoded",
    };
  const params = new URLSearchParams(await request.text());
  if ([...params.keys()].length > MAX_FIELDS)
    return { ok: false, problem: `the provider's answer must have at most ${MAX_FIELDS} fields` };
  return { ok: true, params };
}

/**
 * A 303 to the callback by GET with the posted parameters in its query, so that it does what it does
 * for an answer in the query (the Authorization Code flow's default), with the browser's cookies.
 */
export function formPostRedirect(callbackUrl: string, params: URLSearchParams): Response {
  return new Response(null, {
    status: 303,
    headers: {
      location: `${callbackUrl}?${params}`,
      'cache-control': 'no-store',
      pragma: 'no-cache',
      // The code is in the Location: not sent on as a Referer by the page it lands on.
      'referrer-policy': 'no-referrer',
    },
  });
}
