import { expect } from 'bun:test';
import type { Storage } from '../../../core/ports/storage.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { CallOptions, CallResult } from '../../helpers/service.ts';
import { storedPasskey } from './stored-passkey.ts';

type Call = (method: string, path: string, o?: CallOptions) => Promise<CallResult>;

/**
 * Fires the deletes of a person's last two first factors (the password and a passkey) at once, through
 * `first` and `second` (one service, or two replicas of one database), `rounds` times with fresh
 * persons: each time exactly one delete succeeds, the other keeps the last first factor with 409.
 */
export async function raceLastTwoFirstFactors(o: {
  first: Call;
  second: Call;
  storage: Storage;
  orgId: string;
  as?: CallOptions;
  rounds?: number;
}) {
  const as = o.as ?? {};
  for (let round = 0; round < (o.rounds ?? 5); round++) {
    const made = await o.first('POST', '/persons', {
      ...as,
      body: { handles: [{ type: 'username', value: `racer-${process.pid}-${Date.now()}-${round}` }] },
    });
    await expectStatus(made, 201);
    const personId: string = made.json.result.person_id;
    await expectStatus(
      await o.first('PUT', `/persons/${personId}/credentials/password`, {
        ...as,
        body: { password: 'correct horse battery staple' },
      }),
      204,
    );
    const passkey = await storedPasskey(o.storage, o.orgId, personId);
    const [a, b] = await Promise.all([
      o.first('DELETE', `/persons/${personId}/credentials/password`, as),
      o.second('DELETE', `/persons/${personId}/credentials/${passkey}`, as),
    ]);
    expect([a.status, b.status].sort(), `${a.text} ${b.text}`).toEqual([204, 409]);
    const left = await o.first('GET', `/persons/${personId}/credentials`, as);
    await expectStatus(left, 200);
    expect(left.json.result).toHaveLength(1);
  }
}
