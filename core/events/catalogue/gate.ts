import * as v from 'valibot';
import { defineEvent } from '../define.ts';
import { identifier, int32, jsonValue, strict, text, timestamp } from '../formats.ts';
import * as s from '../samples.ts';
import {
  analyticsMetadata,
  foundExternalCredential,
  httpRequestMetadata,
  timingMetadata,
} from '../shared-types.ts';
import { EventSource } from '../types.ts';

// "Gate events" (source Gate): what a customer's gateway reports about itself and the requests it serves.

/** A Gate server's build: `build_commit`, `build_date` and `built_by` are optional. */
export const gateVersion = strict({
  version: identifier(),
  variant: identifier(),
  build_commit: v.optional(identifier()),
  build_date: v.optional(timestamp()),
  built_by: v.optional(identifier()),
});

/** One HTTP call a Gate plugin's handler made while serving a request. */
export const gateRoundTrip = strict({
  timing_metadata: timingMetadata,
  http_request_metadata: httpRequestMetadata,
});

/** One Gate plugin that took part in serving a request. */
export const gatePlugin = strict({
  timing_metadata: timingMetadata,
  plugin_index: int32(),
  plugin_id: identifier(),
  plugin_type: identifier(),
  plugin_metadata: jsonValue,
  round_trips: v.array(gateRoundTrip),
});

export const gateServerStarted = defineEvent({
  type: 'GateServerStarted',
  typeNumber: 9,
  source: EventSource.Gate,
  members: {
    analytics_metadata: analyticsMetadata,
    version: gateVersion,
    comment: v.optional(text()),
  },
  sample: (ctx) => ({
    analytics_metadata: s.analytics(ctx),
    version: {
      version: s.pick(['1.14.2', '1.15.0']),
      variant: s.pick(['standard', 'enterprise']),
      build_commit: s.randomHex(40),
      build_date: s.iso(ctx.now - 86_400_000 * s.between(1, 30)),
      built_by: 'github-actions',
    },
    comment: 'started by the deployment pipeline',
  }),
});

export const gateRequestHandled = defineEvent({
  type: 'GateRequestHandled',
  typeNumber: 10,
  source: EventSource.Gate,
  members: {
    analytics_metadata: analyticsMetadata,
    timing_metadata: timingMetadata,
    http_request_metadata: httpRequestMetadata,
    plugins: v.array(gatePlugin),
  },
  sample: (ctx) => {
    const upstream = s.between(5, 60);
    const authn = s.between(1, 8);
    return {
      analytics_metadata: s.analytics(ctx),
      timing_metadata: s.timing(ctx.now, upstream + authn + 1),
      http_request_metadata: s.httpRequest(),
      plugins: [
        {
          timing_metadata: s.timing(ctx.now - upstream, authn),
          plugin_index: 0,
          plugin_id: 'authn-proxy',
          plugin_type: 'authentication-proxy',
          plugin_metadata: { token_valid: true, required_groups: ['customers'] },
          round_trips: [
            {
              timing_metadata: s.timing(ctx.now - upstream, authn - 0.5),
              http_request_metadata: s.httpRequest({
                method: 'GET',
                url: 'https://api.example.com/.well-known/jwks.json',
                status_code: 200,
              }),
            },
          ],
        },
      ],
    };
  },
});

export const gateRequestCredentialFound = defineEvent({
  type: 'GateRequestCredentialFound',
  typeNumber: 30,
  source: EventSource.Gate,
  members: {
    analytics_metadata: analyticsMetadata,
    timing_metadata: timingMetadata,
    http_request_metadata: httpRequestMetadata,
    credential: foundExternalCredential,
    gate_identifier: identifier(),
  },
  sample: (ctx) => ({
    analytics_metadata: s.analytics(ctx),
    timing_metadata: s.timing(ctx.now),
    http_request_metadata: s.httpRequest(),
    credential: {
      credential_id: s.id(ctx),
      credential_type: 'api_key',
      // Never a usable secret: a redacted value with a digest, as a gate reports what it found.
      credential_value: `sk_live_****${s.randomHex(4)}`,
      credential_provider: s.pick(['stripe', 'github', 'openai']),
      credential_hash: s.randomHex(64),
    },
    gate_identifier: s.pick(['gate-eu-1', 'gate-us-2']),
  }),
});

/** Every Gate event. */
export const gateEvents = [gateServerStarted, gateRequestHandled, gateRequestCredentialFound];
