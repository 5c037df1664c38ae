import {
  deletePersonCredential,
  type PersonCredential,
  personCredentials,
} from '../../../core/factors/credentials.ts';
import type { SecondFactor } from '../../../core/factors/policy.ts';
import { checkSecondFactor } from '../../../core/factors/second-factor.ts';
import { definePlugin } from '../../../core/plugin.ts';

interface Kept extends PersonCredential {
  orgId: string;
  personId: string;
  code: string;
}

/**
 * A small second-factor plugin for the tests of the factors plugin, as a TOTP or passkey plugin would be
 * built: its credentials listed through personCredentials and deleted through deletePersonCredential,
 * and `checkSecondFactor` for its method, which accepts the credential's fixed `code`. Credentials are
 * kept in memory: the plugin under test is the factors one, on its real storage and the real issuer.
 */
export function codeFactor(method: SecondFactor = 'totp') {
  const kept: Kept[] = [];
  const checks: Array<{ orgId: string; personId: string; input: Readonly<Record<string, unknown>> }> = [];
  let now = () => Date.now();
  const plugin = definePlugin({
    id: `test-code-factor-${method}`,
    setup: (ctx) => {
      now = () => ctx.clock.now();
      return {
        attach: [
          personCredentials.attach({
            run: ({ orgId, personId }) =>
              kept
                .filter((c) => c.orgId === orgId && c.personId === personId)
                .map(({ orgId: _o, personId: _p, code: _c, ...c }) => c),
          }),
          deletePersonCredential.attach({
            run: ({ orgId, personId, credentialId }) => {
              const i = kept.findIndex(
                (c) => c.orgId === orgId && c.personId === personId && c.credentialId === credentialId,
              );
              if (i < 0) return undefined;
              const [gone] = kept.splice(i, 1);
              return gone;
            },
          }),
          checkSecondFactor.attach({
            match: (i) => i.method === method,
            run: ({ orgId, personId, input }) => {
              checks.push({ orgId, personId, input });
              const mine = kept.filter(
                (c) => c.orgId === orgId && c.personId === personId && c.type === method,
              );
              if (mine.length === 0)
                return { ok: false, reason: 'not_enrolled', detail: `the person has no ${method}` };
              if (input.code === 'slow down')
                return { ok: false, reason: 'rate_limited', detail: 'too many codes', retryAfter: 42 };
              if (!mine.some((c) => c.code === input.code))
                return { ok: false, reason: 'invalid', detail: `the ${method} code does not match` };
              return {
                ok: true,
                authentication: {
                  handle: { type: 'username', value: personId },
                  method,
                  timestamp: new Date(now()).toISOString(),
                },
              };
            },
          }),
        ],
      };
    },
  });
  return {
    plugin,
    checks,
    /** Enrols a credential of the person; `firstFactor` for one that also signs in alone (a passkey). */
    enrol(orgId: string, personId: string, code: string, o: { firstFactor?: boolean; name?: string } = {}) {
      const credentialId = crypto.randomUUID();
      kept.push({
        orgId,
        personId,
        code,
        credentialId,
        type: method,
        ...(o.name ? { name: o.name } : {}),
        createdAt: now(),
        lastUsedAt: now(),
        firstFactor: o.firstFactor ?? false,
        secondFactor: true,
      });
      return credentialId;
    },
  };
}
