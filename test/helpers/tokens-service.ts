import { definePlugin, type ServiceDefinition } from '../../core/plugin.ts';
import type { Clock } from '../../core/ports/clock.ts';
import {
  beforeTokenIssued,
  type TokenDraft,
  type TokenHookResult,
} from '../../core/tokens/before-token-issued.ts';
import { persons } from '../../plugins/persons/index.ts';
import { tokens } from '../../plugins/tokens/index.ts';
import { expectStatus } from './expect-status.ts';
import { type CallOptions, startTestService } from './service.ts';

/** A beforeTokenIssued handler under test: what it returns (or throws), and the drafts it saw. */
export interface HookProbe {
  seen: TokenDraft[];
  answer: (draft: TokenDraft) => TokenHookResult | undefined | Promise<TokenHookResult | undefined>;
}

/** A plugin attaching the probe to beforeTokenIssued. */
export const hookPlugin = (id: string, probe: HookProbe) =>
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

/** What a test asks of a person it adds. */
export interface PersonSpec {
  region?: string;
  groups?: string[];
}

/**
 * A service with the tokens and persons plugins and two hook probes attached in order, served on a
 * loopback port (Bun.serve) so the JWKS can be fetched for real. Persons are made through POST /persons.
 */
export async function startTokensService(options: { clock?: Clock } = {}) {
  const hooks: [HookProbe, HookProbe] = [
    { seen: [], answer: () => undefined },
    { seen: [], answer: () => undefined },
  ];
  const definition: ServiceDefinition = {
    plugins: [persons(), tokens(), hookPlugin('hook-a', hooks[0]), hookPlugin('hook-b', hooks[1])],
  };
  const t = await startTestService({ definition, ...(options.clock ? { clock: options.clock } : {}) });
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: t.service.fetch });
  const url = `http://127.0.0.1:${server.port}`;
  let n = 0;
  const people = {
    /** Creates a person (in the test organization unless `as` names another) and answers its ID. */
    async addPerson(spec: PersonSpec = {}, as: CallOptions = {}): Promise<{ personId: string }> {
      const handles = [{ type: 'username', value: `person-${++n}` }];
      const res = await t.call('POST', '/persons', { ...as, body: { handles, ...spec } });
      await expectStatus(res, 201);
      return { personId: res.json.result.person_id };
    },
    /** Sets the organization's groups_claim_name through PUT /organizations/persons-settings. */
    async setGroupsClaim(name: string, as: CallOptions = {}): Promise<void> {
      const res = await t.call('PUT', '/organizations/persons-settings', {
        ...as,
        body: { groups_claim_name: name },
      });
      await expectStatus(res, 200);
    },
  };
  return {
    ...t,
    persons: people,
    hooks,
    url,
    async stop() {
      server.stop(true);
      await t.stop();
    },
  };
}

export type TokensService = Awaited<ReturnType<typeof startTokensService>>;
