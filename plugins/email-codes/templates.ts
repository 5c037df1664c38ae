import { defineMessageTemplate } from '../../core/messaging/templates.ts';

const STYLE_BODY =
  "margin:0;padding:24px;font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;font-size:16px;line-height:1.5;color:#111827;background:#ffffff";

/**
 * The message with a sign-in code (otp_via_email, as a first or a second factor). Placeholders:
 * `organization`, `code` (six digits), `expires_minutes`, `handle`. Replaced by
 * MAIL_TEMPLATES_DIR/email-sign-in-code.{subject.txt,txt,html} when the deployment has them.
 */
export const signInCodeTemplate = defineMessageTemplate({
  name: 'email-sign-in-code',
  variables: ['organization', 'code', 'expires_minutes', 'handle'],
  required: ['code'],
  // Not the code: subjects are shown on locked screens and written to logs (the development outbox's).
  subject: 'Your {{organization}} sign-in code',
  text: `Your code to sign in to {{organization}} as {{handle}}:

{{code}}

It works once, within {{expires_minutes}} minutes. Nobody from {{organization}} will ask you for it. If you did not try to sign in, ignore this message.
`,
  html: `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Your {{organization}} sign-in code</title></head>
<body style="${STYLE_BODY}">
<h1 style="font-size:20px;margin:0 0 16px">Your {{organization}} sign-in code</h1>
<p>Your code to sign in to {{organization}} as {{handle}}:</p>
<p style="font-size:28px;font-weight:700;letter-spacing:4px;font-family:ui-monospace,monospace">{{code}}</p>
<p style="font-size:14px;color:#374151">It works once, within {{expires_minutes}} minutes. Nobody from {{organization}} will ask you for it. If you did not try to sign in, ignore this message.</p>
</body>
</html>
`,
});

/**
 * The message with a sign-in link (email_link). Placeholders: `organization`, `link`,
 * `expires_minutes`, `handle`. Replaced by MAIL_TEMPLATES_DIR/email-sign-in-link.{subject.txt,txt,html}.
 */
export const signInLinkTemplate = defineMessageTemplate({
  name: 'email-sign-in-link',
  variables: ['organization', 'link', 'expires_minutes', 'handle'],
  required: ['link'],
  subject: 'Sign in to {{organization}}',
  text: `Someone asked to sign in to {{organization}} as {{handle}}.

If it was you, open this link within {{expires_minutes}} minutes and press the button on the page:

{{link}}

The sign-in then continues where you asked for it. The link works once. If you did not ask, ignore this message.
`,
  html: `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Sign in to {{organization}}</title></head>
<body style="${STYLE_BODY}">
<h1 style="font-size:20px;margin:0 0 16px">Sign in to {{organization}}</h1>
<p>Someone asked to sign in to {{organization}} as {{handle}}.</p>
<p>If it was you, open this link within {{expires_minutes}} minutes and press the button on the page:</p>
<p><a href="{{link}}" style="display:inline-block;padding:12px 20px;border-radius:8px;background:#1d4ed8;color:#ffffff;font-weight:600;text-decoration:none">Sign in</a></p>
<p style="font-size:14px;color:#374151">Or copy this address into your browser:<br><span style="word-break:break-all">{{link}}</span></p>
<p style="font-size:14px;color:#374151">The sign-in then continues where you asked for it. The link works once. If you did not ask, ignore this message.</p>
</body>
</html>
`,
});
