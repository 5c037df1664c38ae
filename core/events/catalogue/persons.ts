import * as v from 'valibot';
import { defineEvent } from '../define.ts';
import { identifier, timestamp } from '../formats.ts';
import * as s from '../samples.ts';
import {
  analyticsMetadata,
  authenticationDetails,
  gdprConsent,
  PasswordChangeInitiator,
  passwordChangeInitiator,
  personHandle,
} from '../shared-types.ts';
import { EventSource } from '../types.ts';

// Person, token, consent and password events of "Person and authentication events", all from Cloud.
// Optional members are those the spec calls "optional".

export const personCreated = defineEvent({
  type: 'PersonCreated',
  typeNumber: 4,
  source: EventSource.Cloud,
  members: {
    analytics_metadata: analyticsMetadata,
    person_id: identifier(),
    region: identifier(),
    handles: v.array(personHandle),
    gdpr_consents: v.array(identifier()),
    prev_person_type: v.optional(identifier()),
  },
  sample: (ctx) => ({
    analytics_metadata: s.analytics(ctx),
    person_id: s.id(ctx),
    region: s.region(),
    handles: [s.handle(2), s.handle(1)],
    gdpr_consents: ['necessary', 'analytics'],
    prev_person_type: 'anonymous',
  }),
});

export const anonymousPersonCreated = defineEvent({
  type: 'AnonymousPersonCreated',
  typeNumber: 14,
  source: EventSource.Cloud,
  members: { analytics_metadata: analyticsMetadata, person_id: identifier(), region: identifier() },
  sample: (ctx) => ({ analytics_metadata: s.analytics(ctx), person_id: s.id(ctx), region: s.region() }),
});

export const personDeleted = defineEvent({
  type: 'PersonDeleted',
  typeNumber: 5,
  source: EventSource.Cloud,
  members: {
    person_id: identifier(),
    region: identifier(),
    handles: v.array(personHandle),
    groups: v.array(identifier()),
  },
  sample: (ctx) => ({
    person_id: s.id(ctx),
    region: s.region(),
    handles: [s.handle(2)],
    groups: ['customers', 'beta-testers'],
  }),
});

const tokenMembers = {
  analytics_metadata: analyticsMetadata,
  token_id: identifier(),
  person_id: identifier(),
  mint_token_api: v.boolean(),
  issued_at: timestamp(),
  expires_at: timestamp(),
};

export const tokenMinted = defineEvent({
  type: 'TokenMinted',
  typeNumber: 11,
  source: EventSource.Cloud,
  members: {
    ...tokenMembers,
    prev_anonymous_person_id: v.optional(identifier()),
    first_token: v.boolean(),
    authentications: v.array(authenticationDetails),
  },
  sample: (ctx) => {
    const f = s.factor();
    return {
      analytics_metadata: s.analytics(ctx),
      token_id: s.id(ctx),
      person_id: s.id(ctx),
      mint_token_api: false,
      issued_at: s.iso(ctx.now),
      expires_at: s.iso(ctx.now + 3_600_000),
      first_token: true,
      authentications: [{ timestamp: s.iso(ctx.now - s.between(200, 5000)), ...f }],
    };
  },
});

export const anonymousTokenMinted = defineEvent({
  type: 'AnonymousTokenMinted',
  typeNumber: 15,
  source: EventSource.Cloud,
  members: tokenMembers,
  sample: (ctx) => ({
    analytics_metadata: s.analytics(ctx),
    token_id: s.id(ctx),
    person_id: s.id(ctx),
    mint_token_api: false,
    issued_at: s.iso(ctx.now),
    expires_at: s.iso(ctx.now + 3_600_000),
  }),
});

export const gdprConsentsChanged = defineEvent({
  type: 'GdprConsentsChanged',
  typeNumber: 12,
  source: EventSource.Cloud,
  members: {
    person_id: identifier(),
    new_gdpr_consents: v.array(gdprConsent),
    old_gdpr_consents: v.array(gdprConsent),
  },
  sample: (ctx) => {
    const before = s.iso(ctx.now - 86_400_000 * s.between(1, 90));
    return {
      person_id: s.id(ctx),
      new_gdpr_consents: [
        { consent_level: 'necessary', created_at: before },
        { consent_level: 'analytics', created_at: s.iso(ctx.now) },
      ],
      old_gdpr_consents: [{ consent_level: 'necessary', created_at: before }],
    };
  },
});

export const passwordChanged = defineEvent({
  type: 'PasswordChanged',
  typeNumber: 13,
  source: EventSource.Cloud,
  members: {
    person_id: identifier(),
    region: identifier(),
    handle: personHandle,
    initiated_by: passwordChangeInitiator,
  },
  sample: (ctx) => ({
    person_id: s.id(ctx),
    region: s.region(),
    handle: s.handle(2),
    initiated_by: PasswordChangeInitiator.EndUser,
  }),
});

/** The person, token, consent and password events of "Person and authentication events". */
export const personEvents = [
  personCreated,
  anonymousPersonCreated,
  personDeleted,
  tokenMinted,
  anonymousTokenMinted,
  gdprConsentsChanged,
  passwordChanged,
];
