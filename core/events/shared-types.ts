import * as v from 'valibot';
import {
  double,
  identifier,
  int32,
  int64,
  ipAddress,
  jsonDocument,
  strict,
  text,
  timestamp,
  uuid,
} from './formats.ts';

// The spec's "Shared types", one schema each. Protobuf enums travel as their numbers, as `source` does.

/** `PersonHandleType`: appears as a number in JSON. */
export const PersonHandleType = {
  PersonHandleType_UNSPECIFIED: 0,
  PhoneNumber: 1,
  EmailAddress: 2,
  Username: 3,
} as const;

/** `PasswordChangeInitiator`: appears as a number in JSON. */
export const PasswordChangeInitiator = {
  PasswordChangeInitiator_UNSPECIFIED: 0,
  AdminAPI: 1,
  EndUser: 2,
} as const;

const enumNumber = <const E extends Record<string, number>>(enumeration: E, what: string) => {
  const numbers = Object.values(enumeration) as E[keyof E][];
  return v.picklist(
    numbers,
    `must be a ${what} number (${Object.entries(enumeration)
      .map(([k, n]) => `${n} ${k}`)
      .join(', ')})`,
  );
};

export const analyticsMetadata = strict({
  analytics_correlation_id: uuid(),
  client_ip_address: ipAddress(),
});

export const browserMetadata = strict({
  user_agent: text(),
  window_location: text(),
  service_sdk_version: text(),
});

/** `elapsed` is a double whose unit the spec does not show; the samples use milliseconds. */
export const timingMetadata = strict({ start: timestamp(), end: timestamp(), elapsed: double() });

export const httpRequestMetadata = strict({
  method: identifier(),
  url: text(),
  status_code: int32(),
  request_length: int64(),
  response_length: int64(),
});

export const foundExternalCredential = strict({
  credential_id: uuid(),
  credential_type: text(),
  credential_value: text(),
  credential_provider: text(),
  credential_hash: text(),
});

export const personHandleType = enumNumber(PersonHandleType, 'PersonHandleType');

export const personHandle = strict({ type: personHandleType, value: identifier() });

/** `handle` only for factor methods that allow it (absent for SSO, for example). */
export const authenticationDetails = strict({
  timestamp: timestamp(),
  method: identifier(),
  handle: v.optional(personHandle),
});

export const gdprConsent = strict({ consent_level: identifier(), created_at: timestamp() });

export const passwordChangeInitiator = enumNumber(PasswordChangeInitiator, 'PasswordChangeInitiator');

export const awsTag = strict({ key: identifier(), value: text() });

export const awsManagedPolicy = strict({ policy_name: identifier(), policy_arn: identifier() });

export const awsInlinePolicy = strict({ policy_name: identifier(), policy_document: jsonDocument() });

export const awsPermissionsBoundary = strict({
  permissions_boundary_arn: identifier(),
  permissions_boundary_type: identifier(),
});

/** `expression` is a CEL expression; it is carried, not evaluated. */
export const gcpPolicyBindingCondition = strict({
  expression: identifier(),
  title: text(),
  description: text(),
  location: text(),
});

export const gcpIamPolicyBinding = strict({ role: identifier(), condition: gcpPolicyBindingCondition });

/** Every shared type by the spec's name: object types as strict objects, enums as number picklists. */
export const SHARED_TYPES = {
  AnalyticsMetadata: analyticsMetadata,
  BrowserMetadata: browserMetadata,
  TimingMetadata: timingMetadata,
  HttpRequestMetadata: httpRequestMetadata,
  FoundExternalCredential: foundExternalCredential,
  PersonHandle: personHandle,
  AuthenticationDetails: authenticationDetails,
  GDPRConsent: gdprConsent,
  PasswordChangeInitiator: passwordChangeInitiator,
  AWSTag: awsTag,
  AWSManagedPolicy: awsManagedPolicy,
  AWSInlinePolicy: awsInlinePolicy,
  AWSPermissionsBoundary: awsPermissionsBoundary,
  GCPPolicyBindingCondition: gcpPolicyBindingCondition,
  GCPIAMPolicyBinding: gcpIamPolicyBinding,
} as const;

export type AnalyticsMetadata = v.InferOutput<typeof analyticsMetadata>;
export type BrowserMetadata = v.InferOutput<typeof browserMetadata>;
export type TimingMetadata = v.InferOutput<typeof timingMetadata>;
export type HttpRequestMetadata = v.InferOutput<typeof httpRequestMetadata>;
export type PersonHandle = v.InferOutput<typeof personHandle>;
export type AuthenticationDetails = v.InferOutput<typeof authenticationDetails>;
export type GDPRConsent = v.InferOutput<typeof gdprConsent>;
