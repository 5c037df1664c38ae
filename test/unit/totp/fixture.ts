import { createHmac } from 'node:crypto';
import type { Env } from '../../../core/config.ts';
import { EVENTS_TOPIC, type ServiceEvent } from '../../../core/events/types.ts';
import { checkSecondFactor, type SecondFactorOutcome } from '../../../core/factors/second-factor.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import type { PluginDefinition } from '../../../core/plugin.ts';
import { ack, type Delivered } from '../../../core/ports/event-bus.ts';
import { type TotpOptions, totp } from '../../../plugins/totp/index.ts';
import { manualClock } from '../../helpers/clock.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { identityPlugins } from '../../helpers/identity-service.ts';
import { type CallOptions, startTestService } from '../../helpers/service.ts';

// An implementation of RFC 6238 of the test's own (node:crypto's HMAC, RFC 4648 base32), not otpauth:
// a code the plugin accepts is one any authenticator app would show.

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 (upper case, padding optional) to bytes. */
export function base32Decode(text: string): Buffer {
  const clean = text.replace(/=+$/, '').toUpperCase();
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const c of clean) {
    const index = BASE32.indexOf(c);
    if (index < 0) throw new Error(`not base32: ${c}`);
    value = ((value << 5) | index) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** RFC 4226 HOTP of a counter: dynamic truncation of HMAC-SHA-1, `digits` decimal digits. */
export function hotp(key: Buffer, counter: number, digits = 6): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac('sha1', key).update(message).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

/** RFC 6238 TOTP: the code of the 30-second step `ms` falls in. */
export const totpCode = (secretBase32: string, ms: number, digits = 6): string =>
  hotp(base32Decode(secretBase32), Math.floor(ms / 1000 / 30), digits);

/** A request context as the front door builds it, from `clientIp`. */
export const contextFrom = (clientIp?: string): RequestContext => ({
  clientIp,
  analytics: clientIp ? { clientIpAddress: clientIp } : {},
  browser: { user_agent: 'test', window_location: '', service_sdk_version: '' },
});

// 10:00:05, five seconds into a step: moving by whole steps keeps the clock inside one.
const START = Date.parse('2026-03-01T10:00:05Z');

/**
 * A service with the default identity plugins (persons, tokens, password, factors) and the TOTP plugin,
 * every event published kept, on a manual clock,
 * and a second organization (the hostile one) with its own key.
 */
export async function totpService(o: { env?: Env; totp?: TotpOptions; extra?: PluginDefinition[] } = {}) {
  const clock = manualClock(START);
  const t = await startTestService({
    clock,
    env: { TRUSTED_PROXY_HOPS: '1', ...o.env },
    definition: { plugins: [...identityPlugins(), totp(o.totp), ...(o.extra ?? [])] },
  });
  const events: ServiceEvent[] = [];
  const sub = t.service.ctx.bus.consume<ServiceEvent>(EVENTS_TOPIC, async (m: Delivered<ServiceEvent>) => {
    events.push(m.payload);
    return ack();
  });
  /** The events of that name seen so far, waiting up to 5 s for at least `count`. */
  async function eventsNamed(name: string, count = 1): Promise<ServiceEvent[]> {
    const deadline = Date.now() + 5000;
    const pick = () => events.filter((e) => e.event_metadata.event_name === name);
    while (pick().length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return pick();
  }
  const other = await t.service.ctx.orgs.create('Mallory Inc');
  const asOther: CallOptions = { orgId: other.organization.id, key: other.apiKey };
  let seq = 0;

  /** A person with an email address, through POST /persons. */
  async function addPerson(o: CallOptions = {}): Promise<string> {
    const value = `person-${++seq}@example.com`;
    const res = await t.call('POST', '/persons', {
      ...o,
      body: { handles: [{ type: 'email_address', value }] },
    });
    await expectStatus(res, 201);
    return res.json.result.person_id;
  }

  const enrol = (personId: string, o: CallOptions = {}) =>
    t.call('POST', `/persons/${personId}/credentials/totp`, o);
  const confirm = (personId: string, credentialId: string, code: unknown, o: CallOptions = {}) =>
    t.call('POST', `/persons/${personId}/credentials/totp/${credentialId}/confirm`, { ...o, body: { code } });

  /** Enrols and confirms an authenticator ("Phone") for the person: its ID, secret and recovery codes. */
  async function enrolled(personId: string) {
    const started = await enrol(personId, { body: { name: 'Phone' } });
    await expectStatus(started, 201);
    const { credential_id: credentialId, secret } = started.json.result;
    const done = await confirm(personId, credentialId, totpCode(secret, clock.now()));
    await expectStatus(done, 200);
    // The confirming code's step is used: the next code is the next step's.
    clock.advance(30_000);
    return { credentialId, secret, recoveryCodes: done.json.result.recovery_codes as string[] };
  }

  /** The second step's check for `totp`, as the factors plugin runs it. */
  async function secondStep(
    personId: string,
    input: Record<string, unknown>,
    options: { orgId?: string; clientIp?: string } = {},
  ): Promise<SecondFactorOutcome | undefined> {
    const results = await t.service.ctx.hooks.run(checkSecondFactor, {
      orgId: options.orgId ?? t.org.id,
      personId,
      method: 'totp',
      input,
      rc: contextFrom(options.clientIp),
    });
    if (results.length > 1) throw new Error(`${results.length} handlers answered for totp`);
    return results[0];
  }

  return {
    ...t,
    clock,
    other,
    asOther,
    eventsNamed,
    addPerson,
    enrol,
    confirm,
    enrolled,
    secondStep,
    stop: async () => {
      await sub.stop();
      await t.stop();
    },
  };
}

export type TotpTestService = Awaited<ReturnType<typeof totpService>>;
