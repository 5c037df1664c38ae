import { defineMessageTemplate } from '../../../core/messaging/templates.ts';

/**
 * The email verification message. Placeholders: `organization` (its name), `link` (the verification
 * link), `expires_hours` (how long it works), `handle` (the address). Replaced by
 * MAIL_TEMPLATES_DIR/email-verification.{subject.txt,txt,html} when the deployment has them.
 */
export const emailVerificationTemplate = defineMessageTemplate({
  name: 'email-verification',
  variables: ['organization', 'link', 'expires_hours', 'handle'],
  required: ['link'],
  subject: 'Confirm your email address for {{organization}}',
  text: `Please confirm that {{handle}} is your email address for {{organization}}.

Open this link within {{expires_hours}} hours and confirm:

{{link}}

If you did not expect this message, ignore it: nothing changes.
`,
  html: `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Confirm your email address for {{organization}}</title></head>
<body style="margin:0;padding:24px;font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;font-size:16px;line-height:1.5;color:#111827;background:#ffffff">
<h1 style="font-size:20px;margin:0 0 16px">Confirm your email address</h1>
<p>Please confirm that {{handle}} is your email address for {{organization}}.</p>
<p>Open this link within {{expires_hours}} hours and confirm:</p>
<p><a href="{{link}}" style="display:inline-block;padding:12px 20px;border-radius:8px;background:#1d4ed8;color:#ffffff;font-weight:600;text-decoration:none">Confirm my email address</a></p>
<p style="font-size:14px;color:#374151">Or copy this address into your browser:<br><span style="word-break:break-all">{{link}}</span></p>
<p style="font-size:14px;color:#374151">If you did not expect this message, ignore it: nothing changes.</p>
</body>
</html>
`,
});
