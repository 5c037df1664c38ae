import { afterEach, describe, expect, it } from 'bun:test';
import type { ParsedMail } from 'mailparser';
import type { Messenger, OutboundMessage } from '../../core/ports/messenger.ts';

/** One adapter under test: the messenger, what its recipient got, and a way to make it fail. */
export interface MessengerUnderTest {
  messenger: Messenger;
  /** The messages that reached the other side, parsed. */
  received(): Promise<ParsedMail[]>;
  /** Makes every later send fail (the server gone, the folder unwritable); absent where nothing can. */
  breakIt?(): Promise<void>;
  cleanup(): Promise<void>;
}

const message = (over: Partial<OutboundMessage> = {}): OutboundMessage => ({
  id: crypto.randomUUID(),
  to: { type: 'email_address', value: 'ada@example.com' },
  subject: 'Reset your password for Acme – ünïcode',
  text: 'Follow https://ids.test/password/reset?token=abc\n',
  html: '<p><a href="https://ids.test/password/reset?token=abc">Reset</a></p>',
  fromName: 'Acme "Labs"',
  link: 'https://ids.test/password/reset?token=abc',
  ...over,
});

/** The Messenger port's promises, run against every adapter. */
export function messengerContract(
  name: string,
  make: () => Promise<MessengerUnderTest>,
  o: { canFail: boolean } = { canFail: true },
) {
  describe(`Messenger contract: ${name}`, () => {
    let current: MessengerUnderTest | undefined;
    afterEach(async () => {
      await current?.messenger.close();
      await current?.cleanup();
      current = undefined;
    });

    it('reaches email addresses', async () => {
      current = await make();
      expect(current.messenger.reaches).toContain('email_address');
    });

    it('delivers the subject, both bodies, the sender name and the Message-ID', async () => {
      current = await make();
      const sent = message();
      expect(await current.messenger.send(sent)).toEqual({ ok: true });
      const [m] = await current.received();
      expect(m!.subject).toBe(sent.subject);
      expect(m!.text).toBe(sent.text);
      expect(m!.html).toBe(sent.html);
      expect(m!.from?.value[0]).toMatchObject({ name: 'Acme "Labs"' });
      expect(m!.to && !Array.isArray(m!.to) ? m!.to.value[0]?.address : undefined).toBe('ada@example.com');
      expect(m!.messageId).toContain(sent.id);
    });

    it.skipIf(!o.canFail)(
      'answers a failure as a result that may be retried, never by throwing',
      async () => {
        current = await make();
        await current.breakIt?.();
        const result = await current.messenger.send(message());
        expect(result.ok).toBe(false);
        if (!result.ok) {
          expect(result.permanent).toBe(false);
          expect(result.error.length).toBeGreaterThan(0);
        }
      },
    );
  });
}
