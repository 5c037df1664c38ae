import { defineMessageTemplate } from '../../../core/messaging/templates.ts';

/**
 * The password reset message. Placeholders: `organization` (its name), `link` (the reset link),
 * `expires_minutes` (how long the link works), `handle` (the address it went to). Replaced by
 * MAIL_TEMPLATES_DIR/password-reset.{subject.txt,txt,html} when the deployment has them.
 */
export const passwordResetTemplate = defineMessageTemplate({
  name: 'password-reset',
  variables: ['organization', 'link', 'expires_minutes', 'handle'],
  required: ['link'],
  subject: 'Reset your {{organization}} password',
  text: `Someone asked to reset the password of the {{organization}} account of {{handle}}.

To choose a new password, open this link within {{expires_minutes}} minutes:

{{link}}

The link works once. If you did not ask for this, ignore this message: your password stays as it is.
`,
  html: `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Reset your {{organization}} password</title></head>
<body style="margin:0;padding:24px;font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;font-size:16px;line-height:1.5;color:#111827;background:#ffffff">
<h1 style="font-size:20px;margin:0 0 16px">Reset your {{organization}} password</h1>
<p>Someone asked to reset the password of the {{organization}} account of {{handle}}.</p>
<p>To choose a new password, open this link within {{expires_minutes}} minutes:</p>
<p><a href="{{link}}" style="display:inline-block;padding:12px 20px;border-radius:8px;background:#1d4ed8;color:#ffffff;font-weight:600;text-decoration:none">Choose a new password</a></p>
<p style="font-size:14px;color:#374151">Or copy this address into your browser:<br><span style="word-break:break-all">{{link}}</span></p>
<p style="font-size:14px;color:#374151">The link works once. If you did not ask for this, ignore this message: your password stays as it is.</p>
</body>
</html>
`,
});
