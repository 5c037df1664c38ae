import { definePlugin, type ServiceDefinition } from '../../core/plugin.ts';
import type { Clock } from '../../core/ports/clock.ts';
import {
  beforeTokenIssued,
  type TokenDraft,
  type TokenHookResult,
} from '../../core/tokens/before-token-issued.ts';
import { tokens } from '../../plugins/tokens/index.ts';
import { personsProvider } from './persons-stub.ts';
import { startTestService } from './service.ts';

/** A beforeTokenIssued handler under test: what it returns (or throws), and the drafts it saw. */
export interface HookProbe {
  seen: TokenDraft[];
  answer: (draft: TokenDraft) => TokenHookResult | undefined | Promise<TokenHookResult | undefined>;
}

const hookPlugin = (id: string, probe: HookProbe) =>
  definePlugin({
    id,
    setup: () => ({
      attach: [
        beforeTokenIssued.attach({
          run: (draft) => {
            probe.seen.push(draft);
            return probe.answer(draft);
          },
        }),
      ],
    }),
  });

/**
 * A service with the tokens plugin, the persons provider, and two hook probes attached in order, served
 * on a loopback port (Bun.serve) so the JWKS can be fetched for real.
 */
export async function startTokensService(options: { clock?: Clock } = {}) {
  const persons = personsProvider();
  const hooks: [HookProbe, HookProbe] = [
    { seen: [], answer: () => undefined },
    { seen: [], answer: () => undefined },
  ];
  const definition: ServiceDefinition = {
    plugins: [persons.plugin, tokens(), hookPlugin('hook-a', hooks[0]), hookPlugin('hook-b', hooks[1])],
  };
  const t = await startTestService({ definition, ...(options.clock ? { clock: options.clock } : {}) });
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: t.service.fetch });
  const url = `http://127.0.0.1:${server.port}`;
  return {
    ...t,
    persons,
    hooks,
    url,
    async stop() {
      server.stop(true);
      await t.stop();
    },
  };
}

export type TokensService = Awaited<ReturnType<typeof startTokensService>>;
