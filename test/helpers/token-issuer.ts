import { Elysia } from 'elysia';
import { beforeTokenIssued, definePlugin, ok, type TokenDraft } from 'identity-service/core';
import type { CallOptions, CallResult } from './service.ts';

/**
 * A token issuer in miniature, for tests of the hook contract until persons exist: `POST /issue` calls
 * beforeTokenIssued for person `pid:1` and answers the claims with what the handlers added merged in.
 */
export const tokenIssuerPlugin = definePlugin({
  id: 'issuer',
  declares: [beforeTokenIssued],
  setup: (ctx) => ({
    routes: new Elysia().use(ctx.auth).post(
      '/issue',
      async ({ org }) => {
        const draft: TokenDraft = {
          orgId: org.id,
          personId: 'pid:1',
          issuer: 'authentication',
          claims: { sub: 'pid:1' },
          content: {
            aud: org.id,
            iss: ctx.config.publicBaseUrl,
            sub: 'pid:1',
            region: 'us-iowa',
            first_token: true,
            groups_claim_name: 'groups',
            authentications: [],
            request_metadata: {},
          },
        };
        const results = await ctx.hooks.run(beforeTokenIssued, draft);
        return ok(Object.assign({ ...draft.claims }, ...results.map((r) => r?.claims ?? {})));
      },
      { apiKey: true },
    ),
  }),
});

/** The plugins that issue tokens in tests of the token_minted hook: the miniature issuer, for now. */
export const tokenIssuingPlugins = () => [tokenIssuerPlugin];

/**
 * Issues a token as a sign-in would, for the organization `o` names (the test organization by default):
 * 200 with the claims, or the hook's error. The one place to switch to the real tokens plugin.
 */
export const issueToken = (
  t: { call(method: string, path: string, o?: CallOptions): Promise<CallResult> },
  o: CallOptions = {},
): Promise<CallResult> => t.call('POST', '/issue', o);
