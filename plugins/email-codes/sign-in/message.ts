import type { Messages } from '../../../core/messaging/messages.ts';
import type { RenderedMessage } from '../../../core/messaging/templates.ts';
import { signInCodeTemplate, signInLinkTemplate } from '../templates.ts';

/** The two messages, rendered as the deployment has their templates. */
export interface MessageRenderers {
  code(organization: string, code: string, handle: string): RenderedMessage;
  link(organization: string, link: string, handle: string): RenderedMessage;
}

/** Made in setup: a deployment's template overrides are checked at start. */
export function messageRenderers(messages: Messages, ttlMs: number): MessageRenderers {
  const code = messages.template(signInCodeTemplate);
  const link = messages.template(signInLinkTemplate);
  const expires_minutes = String(Math.round(ttlMs / 60_000));
  return {
    code: (organization, value, handle) => code({ organization, code: value, expires_minutes, handle }),
    link: (organization, value, handle) => link({ organization, link: value, expires_minutes, handle }),
  };
}
