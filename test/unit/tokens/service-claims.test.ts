import { describe, expect, it } from 'bun:test';
import { createHookRegistry, hooksOf } from '../../../core/contract/hooks.ts';
import {
  collectServiceClaims,
  type ServiceClaims,
  serviceTokenClaims,
} from '../../../core/tokens/service-claims.ts';

const request = { orgId: 'o', personId: 'p', issuer: 'mint' };

/** The hooks of a service whose plugins attached these handlers, in order. */
function hooksWith(...results: Array<Record<string, unknown> | undefined>) {
  const registry = createHookRegistry();
  // A plugin written in JavaScript could return any claim; the type check stops a TypeScript one.
  for (const [i, result] of results.entries())
    serviceTokenClaims.attach({ run: () => result as ServiceClaims | undefined }).install(registry, `p${i}`);
  return hooksOf(registry);
}

describe('serviceTokenClaims', () => {
  it("merges the handlers' service claims, leaving out those they do not set", async () => {
    expect(await collectServiceClaims(hooksWith(), request)).toEqual({});
    expect(
      await collectServiceClaims(
        hooksWith({ roles: ['a'] }, undefined, { gdpr_consent_level: ['necessary'] }),
        request,
      ),
    ).toEqual({ roles: ['a'], gdpr_consent_level: ['necessary'] });
  });

  it('fails the issuance for a claim that is not a service claim, or one set twice', async () => {
    await expect(collectServiceClaims(hooksWith({ sub: 'someone' }), request)).rejects.toThrow(
      'sub is not a service claim (roles, gdpr_consent_level)',
    );
    await expect(collectServiceClaims(hooksWith({ roles: [] }, { roles: ['x'] }), request)).rejects.toThrow(
      'two handlers set the claim roles',
    );
  });
});
