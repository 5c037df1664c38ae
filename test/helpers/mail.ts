import { Elysia } from 'elysia';
import * as v from 'valibot';
import { ok } from '../../core/http/envelope.ts';
import { createLogger, type Logger } from '../../core/log.ts';
import type { MessageCounters, MessageOutcome } from '../../core/messaging/counters.ts';
import { defineMessageTemplate } from '../../core/messaging/templates.ts';
import { definePlugin } from '../../core/plugin.ts';

/** A template with every kind of value: the organization's name, a link, free text. */
export const probeTemplate = defineMessageTemplate({
  name: 'probe',
  variables: ['organization', 'link', 'note'],
  required: ['link'],
  subject: 'A probe from {{organization}}',
  text: 'Hello from {{organization}}.\n\nFollow {{link}}\n\n{{note}}\n',
  html: '<p>Hello from {{organization}}.</p><p><a href="{{link}}">Follow the link</a></p><p>{{note}}</p>',
});

/**
 * A plugin that sends the probe message: POST /probe/mail `{to, link, note?, not_after?}` answers 202
 * once the message is queued.
 */
export const mailProbe = () =>
  definePlugin({
    id: 'mail-probe',
    setup(ctx) {
      const render = ctx.messages.template(probeTemplate);
      return {
        routes: new Elysia().use(ctx.auth).post(
          '/probe/mail',
          async ({ org, body, set }) => {
            const organization = (await ctx.orgs.get(org.id))?.name ?? '';
            const rendered = render({ organization, link: body.link, note: body.note ?? '' });
            await ctx.messages.send({
              orgId: org.id,
              to: { type: 'email_address', value: body.to },
              ...rendered,
              fromName: organization,
              link: body.link,
              kind: probeTemplate.name,
              ...(body.not_after ? { notAfter: body.not_after } : {}),
            });
            set.status = 202;
            return ok({ queued: true });
          },
          {
            apiKey: true,
            body: v.object({
              to: v.string(),
              link: v.string(),
              note: v.optional(v.string()),
              not_after: v.optional(v.number()),
            }),
          },
        ),
      };
    },
  });

/** A logger that keeps its lines (parsed), for tests that check what was logged. */
export function capturingLogger(level: 'debug' | 'info' | 'warn' = 'info'): Logger & {
  lines: Array<Record<string, unknown>>;
} {
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger(level, {}, (line) => lines.push(JSON.parse(line)));
  return Object.assign(log, { lines });
}

/** Counters that keep their counts by outcome and kind. */
export function countingCounters(): MessageCounters & { counts: Record<string, number> } {
  const counts: Record<string, number> = {};
  return {
    counts,
    count(outcome: MessageOutcome, kind: string) {
      const key = `${outcome}:${kind}`;
      counts[key] = (counts[key] ?? 0) + 1;
    },
  };
}
