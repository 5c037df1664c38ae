import type { Env } from '../../../core/config.ts';
import { defineService } from '../../../core/plugin.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { consents } from '../../../plugins/consents/index.ts';
import { persons } from '../../../plugins/persons/index.ts';
import { roles } from '../../../plugins/roles/index.ts';
import { tokens } from '../../../plugins/tokens/index.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { startTestService, type TestService } from '../../helpers/service.ts';

/** Persons, tokens, roles and consents on an in-memory PGlite, driven in-process. */
export const startRolesService = (options: { storage?: Storage; env?: Env; clock?: Clock } = {}) =>
  startTestService({
    definition: defineService({ plugins: [persons(), tokens(), roles(), consents()] }),
    ...options,
  });

let seq = 0;
type Caller = Pick<TestService, 'call'>;

/** A person made through POST /persons; its ID. */
export async function newPerson(t: Caller, o: { region?: string; orgId?: string; key?: string } = {}) {
  const res = await t.call('POST', '/persons', {
    body: {
      handles: [{ type: 'username', value: `rp-${process.pid}-${++seq}` }],
      ...(o.region ? { region: o.region } : {}),
    },
    ...(o.orgId ? { orgId: o.orgId, key: o.key } : {}),
  });
  await expectStatus(res, 201);
  return res.json.result.person_id as string;
}

/** Creates permissions (and a role of them when `role` is given) through the API. */
export async function seed(t: Caller, permissions: string[], role?: string) {
  for (const name of permissions)
    await expectStatus(await t.call('POST', '/permissions', { body: { name } }), 201);
  if (role) await expectStatus(await t.call('POST', '/roles', { body: { name: role, permissions } }), 201);
}
