import { Elysia } from 'elysia';
import { beforeTokenIssued, definePlugin, ok, type TokenDraft } from 'identity-service/core';

/**
 * A token issuer in miniature, for tests of the hook contract itself (plugins.test.ts, the example
 * plugin): `POST /issue` calls beforeTokenIssued for person `pid:1` and answers the claims with what the
 * handlers added merged in. Tests of the token_minted webhook use the real plugins
 * (test/helpers/identity-service.ts).
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
          refusesClaim: (claim) => claim === 'sub',
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
