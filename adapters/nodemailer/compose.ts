import type Mail from 'nodemailer/lib/mailer';
import type { OutboundMessage } from '../../core/ports/messenger.ts';

/** The domain of an address, for Message-ID: `example.com` of `no-reply@example.com`. */
const domainOf = (address: string) => address.slice(address.lastIndexOf('@') + 1) || 'localhost';

/**
 * A message as nodemailer composes it: From is MAIL_FROM with the organization's name, one recipient, a
 * text and an HTML alternative, a Message-ID from the message's id, and `Auto-Submitted` (RFC 3834) so
 * that auto-responders do not answer it.
 */
export function mailOptions(message: OutboundMessage, from: string): Mail.Options {
  return {
    from: message.fromName ? { name: message.fromName, address: from } : from,
    to: message.to.value,
    subject: message.subject,
    text: message.text,
    html: message.html,
    messageId: `<${message.id}@${domainOf(from)}>`,
    headers: { 'Auto-Submitted': 'auto-generated' },
  };
}

/** What every transport is told: never read a file or fetch a URL named in a message. */
export const CONTENT_LOCKS = { disableFileAccess: true, disableUrlAccess: true } as const;
