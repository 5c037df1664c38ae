import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { createDevOutbox, createSmtpMessenger } from '../../adapters/nodemailer/index.ts';
import { createLogger } from '../../core/log.ts';
import { smtpTls, startSmtpServer } from '../helpers/smtp.ts';
import { messengerContract } from './messenger.contract.ts';

const log = createLogger('silent');

messengerContract('SMTP (nodemailer) to smtp-server over STARTTLS', async () => {
  const server = await startSmtpServer();
  return {
    messenger: createSmtpMessenger({
      url: server.url,
      from: 'no-reply@ids.test',
      extraCaPem: smtpTls().caPem,
      log,
      timeoutMs: 2000,
    }),
    received: async () => (await server.waitFor(1)).map((m) => m.parsed),
    breakIt: () => server.stop(),
    cleanup: () => server.stop(),
  };
});

messengerContract('the development outbox, in a folder', async () => {
  const root = mkdtempSync(join(tmpdir(), 'outbox-'));
  const dir = join(root, 'outbox');
  return {
    messenger: createDevOutbox({ dir, from: 'no-reply@ids.test', log }),
    received: () =>
      // The messages, not index.jsonl beside them (readdirSync's order is the file system's, not sorted).
      Promise.all(
        readdirSync(dir)
          .filter((f) => f.endsWith('.eml'))
          .map((f) => simpleParser(readFileSync(join(dir, f), 'utf8'))),
      ),
    async breakIt() {
      rmSync(dir, { recursive: true, force: true });
      writeFileSync(dir, 'a file where the folder should be');
    },
    cleanup: async () => rmSync(root, { recursive: true, force: true }),
  };
});

messengerContract(
  'the development outbox, in memory',
  async () => {
    const outbox = createDevOutbox({ dir: undefined, from: 'no-reply@ids.test', log });
    return {
      messenger: outbox,
      received: () => Promise.all(outbox.messages.map((m) => simpleParser(m.eml))),
      cleanup: async () => {},
    };
  },
  { canFail: false },
);
