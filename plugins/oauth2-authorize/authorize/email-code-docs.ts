import type { DocumentDecoration } from 'elysia';

const TAGS = ['OAuth 2.0 authorization endpoint'];

const form = (
  required: string[],
  properties: Record<string, { type: 'string'; maxLength?: number; description?: string }>,
) => ({
  required: true,
  content: {
    'application/x-www-form-urlencoded': { schema: { type: 'object' as const, required, properties } },
  },
});

const CSRF = { type: 'string' as const, description: 'From the page: names the login' };
const ERROR_PAGES = {
  400: {
    description:
      'An HTML error page (the login expired, was completed, or the form is malformed), or the page again',
  },
  403: {
    description:
      "An HTML error page: the form did not come from the browser that opened the login; or the page again: the organization's policy does not offer otp_via_email",
  },
  429: { description: 'The page again, with Retry-After: too many codes asked for or tried' },
};

/** OpenAPI of POST /oauth2/authorize/email-code: "Email me a sign-in code" on the hosted login. */
export const emailCodeDoc: DocumentDecoration = {
  requestBody: form(['csrf_token', 'handle'], {
    csrf_token: CSRF,
    handle: { type: 'string', maxLength: 320, description: 'The email address typed' },
  }),
  operationId: 'PostOauth2AuthorizeEmailCode',
  summary: 'Send a sign-in code by email (hosted login)',
  description:
    "Posted by the login page's \"Email me a sign-in code\" button (the form's handle, no password) when the organization's policy allows `otp_via_email`: sends a 6-digit code to the address and answers the code page, the same page whether the address names a person or nobody. The email-codes plugin's limits apply (429 with Retry-After).",
  responses: { 200: { description: 'The code page' }, ...ERROR_PAGES },
  tags: TAGS,
  security: [],
};

/** OpenAPI of POST /oauth2/authorize/email-code/verify: the code page's answer. */
export const emailCodeVerifyDoc: DocumentDecoration = {
  requestBody: form(['csrf_token', 'challenge_id', 'code'], {
    csrf_token: CSRF,
    challenge_id: { type: 'string', maxLength: 64, description: 'From the code page' },
    code: { type: 'string', maxLength: 64, description: 'The 6-digit code of the message' },
    handle: { type: 'string', maxLength: 320, description: 'The address, shown again on the page' },
  }),
  operationId: 'PostOauth2AuthorizeEmailCodeVerify',
  summary: 'Sign in with a code sent by email (hosted login)',
  description:
    'The code page posts the code: a right one finishes the login as a password does (the second step when the policy asks for it, then a 303 to the client with `code`; the ID token has `amr` ["otp"]); a wrong one answers the page again (401) and emits AuthenticationFailed_v1 with `otp_via_email`.',
  responses: {
    303: { description: 'Back to the client with the code, or an error' },
    401: { description: 'The code page again: the code is not right, or expired' },
    ...ERROR_PAGES,
  },
  tags: TAGS,
  security: [],
};

/** OpenAPI of POST /oauth2/authorize/second-factor/email: the second step's code by email. */
export const secondFactorEmailDoc: DocumentDecoration = {
  requestBody: form(['csrf_token'], {
    csrf_token: {
      type: 'string',
      description: 'From the page: names the sign-in waiting for its second factor',
    },
  }),
  operationId: 'PostOauth2AuthorizeSecondFactorEmail',
  summary: 'Send the second step a code by email (hosted login)',
  description:
    'The second step\'s "Email me a code": sends a 6-digit code to the person\'s email address and answers the page with its code field (which posts to POST /oauth2/authorize/second-factor with `method` otp_via_email and `challenge_id`).',
  responses: { 200: { description: 'The second step page with the code field' }, ...ERROR_PAGES },
  tags: TAGS,
  security: [],
};
