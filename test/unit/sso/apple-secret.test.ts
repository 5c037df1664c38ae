import { describe, expect, it } from 'bun:test';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import * as v from 'valibot';
import { apple, appleOptions as schema } from '../../../plugins/sso/providers/apple.ts';
import { parseGoDuration } from '../../../plugins/sso/providers/duration.ts';
import { appleOptions } from './fixture.ts';

const NOW = 1_750_000_000;

describe('the Apple client secret', () => {
  it('is an ES256 JWT with kid, iss, iat, exp, aud and sub, verified with the public key', async () => {
    const { options, publicKey } = await appleOptions({ secret_lifetime: '24h' });
    const parsed = v.parse(schema, options);
    const jwt = await apple.clientSecret!({
      clientId: 'com.acme.web',
      clientSecret: '',
      options: parsed,
      now: NOW,
    });
    expect(decodeProtectedHeader(jwt)).toEqual({ alg: 'ES256', kid: 'KEY0123456' });
    const { payload } = await jwtVerify(jwt, publicKey, {
      algorithms: ['ES256'],
      issuer: 'TEAM012345',
      audience: 'https://appleid.apple.com',
      subject: 'com.acme.web',
      currentDate: new Date(NOW * 1000),
    });
    expect(payload).toEqual({
      iss: 'TEAM012345',
      iat: NOW,
      exp: NOW + 86_400,
      aud: 'https://appleid.apple.com',
      sub: 'com.acme.web',
    });
  });

  it('lasts 30 days by default and is reused until shortly before it expires', async () => {
    const { options } = await appleOptions();
    const parsed = v.parse(schema, options);
    const make = (now: number) =>
      apple.clientSecret!({ clientId: 'com.acme.cache', clientSecret: '', options: parsed, now });
    const first = await make(NOW);
    const payload = JSON.parse(atob(first.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/')));
    expect(payload.exp - payload.iat).toBe(30 * 86_400);
    expect(await make(NOW + 29 * 86_400)).toBe(first);
    const renewed = await make(NOW + 30 * 86_400 - 60);
    expect(renewed).not.toBe(first);
  });

  it('reads Go durations', () => {
    expect(parseGoDuration('1m')).toBe(60);
    expect(parseGoDuration('24h')).toBe(86_400);
    expect(parseGoDuration('1h30m')).toBe(5_400);
    expect(parseGoDuration('1.5h')).toBe(5_400);
    expect(parseGoDuration('30d')).toBeUndefined();
    expect(parseGoDuration('h')).toBeUndefined();
  });
});
