import type { DocumentDecoration } from 'elysia';

const TAGS = ['OAuth 2.0 authorization endpoint'];
const html = (description: string) => ({
  description,
  content: { 'text/html': { schema: { type: 'string' as const } } },
});
const form = (properties: Record<string, { type: 'string'; description?: string; enum?: string[] }>) => ({
  required: true,
  content: {
    'application/x-www-form-urlencoded': {
      schema: { type: 'object' as const, required: Object.keys(properties), properties },
    },
  },
});

/** OpenAPI of GET /oauth2/device. */
export const devicePageDoc: DocumentDecoration = {
  operationId: 'GetOauth2Device',
  summary: 'The device page: enter the user code (RFC 8628)',
  description:
    'The verification_uri of a device authorization: a form for the user code a device shows. `user_code` (verification_uri_complete) prefills it; the person still confirms. Codes are 8 letters of BCDFGHJKLMNPQRSTVWXZ shown as XXXX-XXXX, read regardless of case, dashes and spaces.',
  tags: TAGS,
  security: [],
  parameters: [
    {
      name: 'user_code',
      in: 'query',
      required: false,
      schema: { type: 'string' },
      description: 'Prefills the form',
    },
  ],
  responses: { 200: html('The page') },
};

/** OpenAPI of POST /oauth2/device. */
export const deviceSubmitDoc: DocumentDecoration = {
  operationId: 'PostOauth2Device',
  summary: 'Enter a user code',
  description:
    "Posted by the device page: `user_code`. Limited per client address (OAUTH2_DEVICE_CODE_RATE_LIMIT): beyond, a 429 page with Retry-After. A code that is unknown, expired or decided answers the form again (400). A valid one starts the hosted login of the device's client, answering GET /oauth2/device/callback: a live sign-in session of the client's organization in this browser answers at once (303), else the sign-in page, with every factor the organization allows.",
  tags: TAGS,
  security: [],
  requestBody: form({ user_code: { type: 'string' } }),
  responses: {
    200: html('The sign-in page'),
    303: { description: 'To the callback, signed in by the session' },
    400: html('The form again: the code is not valid'),
    429: html('Too many codes entered from this address; Retry-After'),
  },
};

/** OpenAPI of GET /oauth2/device/callback. */
export const deviceCallbackDoc: DocumentDecoration = {
  operationId: 'GetOauth2DeviceCallback',
  summary: "The device page's sign-in answer",
  description:
    "Where the hosted login answers a device code's sign-in (`code`, `state`, `iss`): from the browser that entered the code, the sign-in redeemed here, then the approval page naming the client and the scopes (Allow, Deny).",
  tags: TAGS,
  security: [],
  responses: {
    200: html('The approval page'),
    400: html('Not a sign-in under way here, or it failed'),
    403: html('Another browser, or the session ended'),
  },
};

/** OpenAPI of POST /oauth2/device/approve. */
export const deviceApproveDoc: DocumentDecoration = {
  operationId: 'PostOauth2DeviceApprove',
  summary: 'Approve or deny a device',
  description:
    "Posted by the approval page: `csrf_token` and `decision`, from the browser that entered the code and with the sign-in session that signed in. `allow`: the device's next poll gets the tokens (once); `deny`: access_denied.",
  tags: TAGS,
  security: [],
  requestBody: form({
    csrf_token: { type: 'string', description: 'From the approval page' },
    decision: { type: 'string', enum: ['allow', 'deny'] },
  }),
  responses: {
    200: html('Decided'),
    400: html('The form is malformed, expired or answered'),
    403: html('Another browser or session'),
  },
};
