import type { DocumentDecoration } from 'elysia';
import { Elysia } from 'elysia';
import type { BrowserBinding } from '../../../core/http/browser-binding.ts';
import { formGuard } from '../../../core/http/hosted-page.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import { AuthorizeErrors } from '../errors.ts';
import type { LoginAnswer } from '../login/answer.ts';
import {
  EMAIL_LINK_CONTINUE_PATH,
  EMAIL_LINK_PAGE_PATH,
  EMAIL_LINK_PATH,
} from '../login/email-link-login.ts';
import { linkRefusedPage } from '../login/email-link-page.ts';
import type { Login } from '../login/login.ts';
import { digest } from '../store/digest.ts';

export interface EmailLinkRouteDeps {
  login: Login;
  baseUrl: string;
  browserCookie: BrowserBinding;
  readContext: (request: Request) => RequestContext;
  /** A form posted by a page of this service (same origin, form-encoded), or the error page. */
  formOf: (request: Request) => Promise<URLSearchParams>;
  render: (answer: LoginAnswer, extra?: Record<string, string>) => Response;
  errorAnswer: (error: unknown) => Response;
}

/** One field given once, not empty, at most `max` characters. */
function field(body: URLSearchParams, name: string, max: number): string {
  const all = body.getAll(name);
  if (all.length !== 1 || !all[0])
    throw AuthorizeErrors.INVALID_FORM(`${name} must be given once and not be empty`);
  if (all[0].length > max) throw AuthorizeErrors.INVALID_FORM(`${name} must be at most ${max} characters`);
  return all[0];
}

const TAGS = ['OAuth 2.0 authorization endpoint'];
const CSRF = { type: 'string' as const, description: 'From the page: names the login' };
const HANDLE = { type: 'string' as const, maxLength: 320, description: 'The email address typed' };
const formBody = (required: string[], properties: Record<string, object>) => ({
  required: true,
  content: {
    'application/x-www-form-urlencoded': { schema: { type: 'object' as const, required, properties } },
  },
});
const LOGIN_ERRORS = {
  400: { description: 'An HTML error page (the login expired, was completed, or the form is malformed)' },
  403: {
    description:
      "An HTML error page: the form did not come from the browser that opened the login; or the page again: the organization's policy does not offer email_link",
  },
  429: {
    description: 'The page again, with Retry-After: too many links asked for, or Continue pressed too often',
  },
};

const startDoc: DocumentDecoration = {
  requestBody: formBody(['csrf_token', 'handle'], { csrf_token: CSRF, handle: HANDLE }),
  operationId: 'PostOauth2AuthorizeEmailLink',
  summary: 'Send a sign-in link by email (hosted login)',
  description:
    "Posted by the login page's \"Email me a sign-in link\" button (the form's handle, no password) when the organization's policy allows `email_link`: sends a link bound to this login (no other login, and not the API's /authenticate/email/verify, can use it) and answers the check-your-email page, the same whether the address names a person or nobody. Single use, and as long-lived as the API's links (EMAIL_CODE_TTL_MINUTES). The email-codes plugin's limits apply.",
  responses: { 200: { description: 'The check-your-email page, with its Continue button' }, ...LOGIN_ERRORS },
  tags: TAGS,
  security: [],
};

const continueDoc: DocumentDecoration = {
  requestBody: formBody(['csrf_token', 'challenge_id'], {
    csrf_token: CSRF,
    challenge_id: { type: 'string', maxLength: 64, description: 'From the check-your-email page' },
    handle: { ...HANDLE, description: 'The address, shown again on the page' },
  }),
  operationId: 'PostOauth2AuthorizeEmailLinkContinue',
  summary: 'Continue a sign-in whose link was pressed on another device (hosted login)',
  description:
    'The check-your-email page\'s Continue (a plain form: the hosted pages run no script). Once the link\'s button was pressed in another browser, finishes this login as a password does (the second step when the policy asks for one, then a 303 to the client with `code`; the ID token has `amr` ["otp"]). Before that, the page again with a note (200); a link of another login or organization, used or expired, the page again (401).',
  responses: {
    200: { description: 'The page again: the link has not been pressed yet' },
    303: { description: 'Back to the client with the code, or an error' },
    401: { description: 'The page again: the link cannot sign in (used, expired, another login’s)' },
    ...LOGIN_ERRORS,
  },
  tags: TAGS,
  security: [],
};

const pageDoc: DocumentDecoration = {
  operationId: 'GetOauth2AuthorizeEmailLinkSignIn',
  summary: "The page of a hosted login's sign-in link",
  description:
    "Where the hosted login's email_link messages lead: `?token=`. A server-rendered page saying who asked, when and from where, with one button; opening the link alone uses nothing, so a mail scanner signs nobody in. An unusable link (unknown, used, expired, its login over) answers a page saying why (400).",
  parameters: [{ name: 'token', in: 'query', required: true, schema: { type: 'string' } }],
  responses: {
    200: { description: 'The page', content: { 'text/html': { schema: { type: 'string' } } } },
    400: { description: 'A page: the link cannot be used, and why' },
    429: { description: 'A page: too many links opened from this address' },
  },
  tags: TAGS,
  security: [],
};

const pressDoc: DocumentDecoration = {
  requestBody: formBody(['form_token', 'token'], {
    form_token: {
      type: 'string',
      description: "From the page: bound to its httpOnly SameSite=Strict cookie (the form's CSRF check)",
    },
    token: { type: 'string', maxLength: 64, description: "The link's token, from the page" },
  }),
  operationId: 'PostOauth2AuthorizeEmailLinkSignIn',
  summary: "Press the button of a hosted login's sign-in link",
  description:
    "In the browser of the login the link was sent for (its binding cookie): the login finishes here, as a password's does (the second step when the policy asks for one, then a 303 to the client with `code`). In any other browser: the link is confirmed, and the page says to press Continue in the login's window.",
  responses: {
    200: { description: "A page: confirmed, continue in the login's window (or the second step's page)" },
    303: { description: 'Back to the client with the code, or an error' },
    400: { description: 'A page: the link cannot be used, and why' },
    403: { description: 'A page: the form did not come from the page this browser opened' },
    429: { description: 'A page: too many links opened from this address' },
  },
  tags: TAGS,
  security: [],
};

/**
 * The hosted login's sign-in link: the login page's button, the check-your-email page's Continue, and
 * the link's own page and button (a form guarded by its own SameSite=Strict cookie, as /email/sign-in's).
 */
export function emailLinkRoutes(deps: EmailLinkRouteDeps) {
  const browserHash = async (request: Request) => {
    const sent = deps.browserCookie.sent(request);
    return sent ? await digest(sent) : undefined;
  };
  const guard = formGuard({
    baseUrl: deps.baseUrl,
    name: 'oauth2_email_link_form',
    path: EMAIL_LINK_PAGE_PATH,
    maxAgeSeconds: 3600,
  });
  return new Elysia()
    .post(
      EMAIL_LINK_PATH,
      async ({ request }) => {
        try {
          const body = await deps.formOf(request);
          const form = { csrfToken: field(body, 'csrf_token', 256), handle: field(body, 'handle', 320) };
          return deps.render(
            await deps.login.emailLink.start(form, await browserHash(request), deps.readContext(request)),
          );
        } catch (error) {
          return deps.errorAnswer(error);
        }
      },
      { parse: 'none', detail: startDoc },
    )
    .post(
      EMAIL_LINK_CONTINUE_PATH,
      async ({ request }) => {
        try {
          const body = await deps.formOf(request);
          const form = {
            csrfToken: field(body, 'csrf_token', 256),
            challengeId: field(body, 'challenge_id', 64),
            handle: body.has('handle') ? field(body, 'handle', 320) : '',
          };
          return deps.render(
            await deps.login.emailLink.continue(form, await browserHash(request), deps.readContext(request)),
          );
        } catch (error) {
          return deps.errorAnswer(error);
        }
      },
      { parse: 'none', detail: continueDoc },
    )
    .get(
      EMAIL_LINK_PAGE_PATH,
      async ({ request }) => {
        try {
          const token = (new URL(request.url).searchParams.get('token') ?? '').slice(0, 64);
          const { token: formToken, cookie } = guard.issue();
          const page = await deps.login.emailLink.page(token, formToken, deps.readContext(request));
          return deps.render(page, page.status === 200 ? { 'set-cookie': cookie } : {});
        } catch (error) {
          return deps.errorAnswer(error);
        }
      },
      { detail: pageDoc },
    )
    .post(
      EMAIL_LINK_PAGE_PATH,
      async ({ request }) => {
        try {
          const body = await deps.formOf(request);
          const formToken = field(body, 'form_token', 256);
          const token = field(body, 'token', 64);
          const refusal = guard.refusal(request, formToken);
          if (refusal)
            return deps.render({
              kind: 'page',
              status: 403,
              html: linkRefusedPage(refusal),
              formTargets: [],
            });
          return deps.render(
            await deps.login.emailLink.press(token, await browserHash(request), deps.readContext(request)),
          );
        } catch (error) {
          return deps.errorAnswer(error);
        }
      },
      { parse: 'none', detail: pressDoc },
    );
}
