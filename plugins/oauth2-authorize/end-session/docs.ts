import type { DocumentDecoration } from 'elysia';

/** The logout request's parameters (RP-Initiated Logout 1.0 §2): name and description. */
const PARAMETERS: [name: string, description: string][] = [
  [
    'id_token_hint',
    'An ID token this service issued to the client (an expired one too). When its person is the one signed in to this browser, the session of its organization ends without a question; otherwise a confirmation page is shown.',
  ],
  [
    'client_id',
    "The client asking; with id_token_hint it must be the hint's aud. Without a hint, it names the organization whose session the confirmation ends (without either, every session of this browser).",
  ],
  [
    'post_logout_redirect_uri',
    "Where the browser goes after the logout (303): exactly one of the client's post_logout_redirect_uris, else an error page. Needs client_id or id_token_hint.",
  ],
  ['state', 'Added to post_logout_redirect_uri as it was sent.'],
  ['ui_locales', 'Accepted; the pages are in English.'],
];

const DESCRIPTION =
  "OpenID Connect RP-Initiated Logout 1.0, the discovery document's end_session_endpoint. Ends the browser's sign-in session of the hosted login (its cookie cleared), emits PersonLoggedOut_v1 and sends a Back-Channel Logout token to each client the session signed in to that registered a backchannel_logout_uri. Then redirects (303) to post_logout_redirect_uri with state, or shows a signed-out page. Without an id_token_hint, or with one for another person than the one signed in, a confirmation page asks first; its form posts back here with a csrf_token paired with a SameSite=Strict cookie, so a post from another site ends nothing (403 page). Any problem (a hint that is no ID token of this service, a client_id that is not the hint's audience, a post_logout_redirect_uri not registered exactly) is an HTML error page, never a redirect. A parameter given twice is refused.";

const responses: DocumentDecoration['responses'] = {
  200: {
    description: 'The confirmation page, or the signed-out page',
    content: { 'text/html': { schema: { type: 'string' as const } } },
  },
  303: { description: 'Signed out: to post_logout_redirect_uri, with state' },
  400: { description: 'An HTML error page: a parameter that breaks its rule' },
  403: {
    description: 'An HTML error page: a confirmation that did not come from the page this browser was shown',
  },
};

const TAGS = ['OAuth 2.0 authorization endpoint'];

/** OpenAPI of GET /oauth2/logout. */
export const getLogoutDoc: DocumentDecoration = {
  operationId: 'GetOauth2Logout',
  summary: 'Log out of the hosted login (RP-Initiated Logout)',
  description: DESCRIPTION,
  parameters: PARAMETERS.map(([name, description]) => ({
    name,
    in: 'query',
    required: false,
    schema: { type: 'string' as const },
    description,
  })),
  responses,
  tags: TAGS,
  security: [],
};

/** OpenAPI of POST /oauth2/logout: the same parameters form-encoded, or the confirmation form. */
export const postLogoutDoc: DocumentDecoration = {
  operationId: 'PostOauth2Logout',
  summary: 'Log out of the hosted login by POST, or confirm a logout',
  description: `The same request as GET /oauth2/logout, its parameters in an application/x-www-form-urlencoded body; a body with csrf_token is the confirmation page's form (client_id, post_logout_redirect_uri and state as the page carried them). ${DESCRIPTION}`,
  requestBody: {
    required: true,
    content: {
      'application/x-www-form-urlencoded': {
        schema: {
          type: 'object' as const,
          properties: Object.fromEntries([
            ...PARAMETERS.map(([name, description]) => [name, { type: 'string' as const, description }]),
            ['csrf_token', { type: 'string' as const, description: "The confirmation page's token" }],
          ]),
        },
      },
    },
  },
  responses,
  tags: TAGS,
  security: [],
};
