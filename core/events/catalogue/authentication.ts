import * as v from 'valibot';
import { base64url } from '../../ids.ts';
import { defineEvent } from '../define.ts';
import { identifier, ipAddress, text } from '../formats.ts';
import * as s from '../samples.ts';
import { analyticsMetadata, browserMetadata, personHandle } from '../shared-types.ts';
import { EventSource } from '../types.ts';

// Authentication and browser-side events of "Person and authentication events". Optional members are
// exactly those the spec qualifies: "absent for SSO authentications", "only if (previously)
// authenticated", "when from the SDK".

export const authenticationSucceeded = defineEvent({
  type: 'AuthenticationSucceeded',
  typeNumber: 1,
  source: EventSource.SDK,
  members: {
    analytics_metadata: analyticsMetadata,
    browser_metadata: browserMetadata,
    person_id: identifier(),
    region: identifier(),
    success_authn_method: identifier(),
    authenticated_methods: v.array(identifier()),
    handle: v.optional(personHandle),
  },
  sample: (ctx) => {
    const f = s.factor();
    return {
      analytics_metadata: s.analytics(ctx),
      browser_metadata: s.browser(),
      person_id: s.id(ctx),
      region: s.region(),
      success_authn_method: f.method,
      authenticated_methods: [f.method],
      handle: f.handle,
    };
  },
});

// The spec allows SDK or Cloud; this server authenticates on the backend (password factor, a token hook
// that blocks issuance), so what it emits comes from Cloud, and browser_metadata is then absent.
export const authenticationFailed = defineEvent({
  type: 'AuthenticationFailed',
  typeNumber: 2,
  source: EventSource.Cloud,
  members: {
    analytics_metadata: analyticsMetadata,
    browser_metadata: v.optional(browserMetadata),
    person_id: v.optional(identifier()),
    region: v.optional(identifier()),
    authenticated_methods: v.optional(v.array(identifier())),
    failed_authn_method: identifier(),
    failure_reason: identifier(),
    failure_detail: text(),
    handle: v.optional(personHandle),
  },
  sample: (ctx) => ({
    analytics_metadata: s.analytics(ctx),
    failed_authn_method: 'password',
    failure_reason: 'invalid_credentials',
    failure_detail: 'the password does not match the one set for this handle',
    handle: s.handle(2),
  }),
});

export const virtualPageLoaded = defineEvent({
  type: 'VirtualPageLoaded',
  typeNumber: 3,
  source: EventSource.SDK,
  members: {
    analytics_metadata: analyticsMetadata,
    browser_metadata: browserMetadata,
    person_id: v.optional(identifier()),
    region: v.optional(identifier()),
  },
  sample: (ctx) => ({
    analytics_metadata: s.analytics(ctx),
    browser_metadata: s.browser(),
    person_id: s.id(ctx),
    region: s.region(),
  }),
});

export const serviceSdkLoaded = defineEvent({
  type: 'ServiceSDKLoaded',
  typeNumber: 6,
  source: EventSource.SDK,
  members: { analytics_metadata: analyticsMetadata, browser_metadata: browserMetadata },
  sample: (ctx) => ({ analytics_metadata: s.analytics(ctx), browser_metadata: s.browser() }),
});

const sdkPersonMembers = {
  analytics_metadata: analyticsMetadata,
  browser_metadata: browserMetadata,
  person_id: identifier(),
  region: identifier(),
};

export const personIdentified = defineEvent({
  type: 'PersonIdentified',
  typeNumber: 7,
  source: EventSource.SDK,
  members: sdkPersonMembers,
  sample: (ctx) => ({
    analytics_metadata: s.analytics(ctx),
    browser_metadata: s.browser(),
    person_id: s.id(ctx),
    region: s.region(),
  }),
});

export const personLoggedOut = defineEvent({
  type: 'PersonLoggedOut',
  typeNumber: 8,
  source: EventSource.SDK,
  members: sdkPersonMembers,
  sample: (ctx) => ({
    analytics_metadata: s.analytics(ctx),
    browser_metadata: s.browser(),
    person_id: s.id(ctx),
    region: s.region(),
  }),
});

// The spec names an "edge function" as the source, which EventSource has no value for. The edge function
// runs on the service's own infrastructure (it checks the domain a token is used on), not in a customer's
// Gate nor in the browser SDK, so Cloud is the closest: consumers filtering on source see it with the
// other server-side detections.
export const mitmAttackDetected = defineEvent({
  type: 'MitmAttackDetected',
  typeNumber: 31,
  source: EventSource.Cloud,
  members: {
    client_ip_address: ipAddress(),
    user_agent: text(),
    mitm_domain: identifier(),
    allowed_domains: v.array(identifier()),
    token_tag: identifier(),
    mitm_token: identifier(),
  },
  sample: (ctx) => ({
    client_ip_address: s.clientIp(),
    user_agent: s.userAgent(),
    mitm_domain: s.pick(['login-example.net', 'example-com.secure-signin.example.net']),
    allowed_domains: ['app.example.com', 'example.com'],
    token_tag: s.randomHex(16),
    mitm_token: fakeJwt(ctx.orgId, s.id(ctx), ctx.now),
  }),
});

/** A compact JWS-shaped string with a random signature: looks like an identity token, verifies as none. */
function fakeJwt(orgId: string, sub: string, now: number): string {
  const b64 = (x: unknown) => base64url(new TextEncoder().encode(JSON.stringify(x)));
  const iat = Math.floor(now / 1000);
  const signature = base64url(crypto.getRandomValues(new Uint8Array(64)));
  return `${b64({ alg: 'ES256', typ: 'JWT' })}.${b64({ aud: orgId, sub, iat, exp: iat + 3600 })}.${signature}`;
}

/** The authentication, SDK and MITM events of "Person and authentication events". */
export const authenticationEvents = [
  authenticationSucceeded,
  authenticationFailed,
  virtualPageLoaded,
  serviceSdkLoaded,
  personIdentified,
  personLoggedOut,
  mitmAttackDetected,
];
