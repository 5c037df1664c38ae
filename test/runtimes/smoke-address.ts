/**
 * The client address on a runtime: the socket's address must reach the plugins (the entry hands it to
 * the front door), and a client's own X-Forwarded-For must not change it. Observed through the
 * per-address limit of POST /persons/anonymous (burst 20 by default): the 21st request from one
 * socket is refused whatever address each claims. Without the address the limit is skipped.
 */
import { check, type SmokeTarget } from './http.ts';

const BURST = 20;

export async function smokeAddress(t: SmokeTarget): Promise<string[]> {
  const statuses: number[] = [];
  for (let n = 1; n <= BURST + 1; n++) {
    const res = await fetch(`${t.baseUrl}/persons/anonymous`, {
      method: 'POST',
      headers: { 'Service-OrgID': t.orgId, 'x-forwarded-for': `203.0.113.${n}` },
    });
    await res.body?.cancel();
    statuses.push(res.status);
  }
  check(
    statuses.slice(0, BURST).every((s) => s === 201) && statuses[BURST] === 429,
    `POST /persons/anonymous is limited per socket address, spoofed X-Forwarded-For or not (got ${statuses.join(' ')})`,
  );
  return ['per-address limit on the socket address'];
}
