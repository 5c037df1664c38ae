import { defineCapability } from '../contract/capabilities.ts';
import { PersonHandleType } from '../events/shared-types.ts';
import type { Transaction } from '../ports/storage.ts';

/** Every handle type, as the API writes them (the persons reference). */
export const HANDLE_TYPES = ['email_address', 'phone_number', 'username'] as const;

/** A handle's type as the API writes it; events carry PersonHandleType numbers (eventHandle). */
export type HandleType = (typeof HANDLE_TYPES)[number];

export const isHandleType = (type: string): type is HandleType =>
  (HANDLE_TYPES as readonly string[]).includes(type);

/** PersonHandleType numbers of the events (the spec: PhoneNumber 1, EmailAddress 2, Username 3). */
const EVENT_HANDLE_TYPE: Record<HandleType, 1 | 2 | 3> = {
  phone_number: PersonHandleType.PhoneNumber,
  email_address: PersonHandleType.EmailAddress,
  username: PersonHandleType.Username,
};

/** A handle as events carry it: its type as the PersonHandleType number. */
export const eventHandle = (h: PersonHandle): { type: 1 | 2 | 3; value: string } => ({
  type: EVENT_HANDLE_TYPE[h.type],
  value: h.value,
});

/**
 * `eventHandle` of a handle whose type is any string (a TokenAuthentication's): undefined for a type no
 * event can name, or an empty value.
 */
export const eventHandleOf = (h: { type: string; value: string }) =>
  isHandleType(h.type) && h.value ? eventHandle({ type: h.type, value: h.value }) : undefined;

/** A way to reach or name a person: a normalised email address, an E.164 phone number or a username. */
export interface PersonHandle {
  type: HandleType;
  value: string;
}

/** A handle as a person holds it: with whether it is proven to reach them. */
export interface HeldHandle extends PersonHandle {
  /**
   * True once proven: a verification link followed (email), an SSO provider vouching for the address,
   * or the organization saying so through the API. Only a verified email links an SSO identity.
   */
  verified: boolean;
}

/** A person as other plugins see it. */
export interface PersonRecord {
  personId: string;
  orgId: string;
  /** `regular`, or `anonymous` for a person made by POST /persons/anonymous. */
  personType: 'regular' | 'anonymous';
  active: boolean;
  region: string;
  handles: HeldHandle[];
  groups: string[];
  /** RFC 3339. */
  createdAt: string;
}

/**
 * A person not stored yet, for a sign-up the token_minted hook decides on first: the issuer shows the hook
 * `person` and stores it (`create`) only once the hook allows the token, so a blocked sign-up (an anonymous
 * person, a first SSO sign-in) leaves no person and publishes no created event.
 */
export interface ProspectivePerson {
  /** The person as it will be stored, its ID fixed already. */
  person: PersonRecord;
  /**
   * Stores it and publishes PersonCreated_v1 (AnonymousPersonCreated_v1); a handle another person came to
   * hold meanwhile is a 409 ServiceError.
   */
  create(): Promise<PersonRecord>;
}

/** What the issuer and the factors need of an organization's persons. */
export interface PersonDirectory {
  /**
   * The person, or undefined when the organization has none of that ID. With `tx`, read in the caller's
   * transaction: after the caller has taken a lock a deletion also takes, it sees that deletion.
   */
  get(orgId: string, personId: string, options?: { tx: Transaction }): Promise<PersonRecord | undefined>;
  /** The person holding a handle (the handle is normalised first), or undefined. */
  findByHandle(orgId: string, handle: PersonHandle): Promise<PersonRecord | undefined>;
  /** Normalises a handle as stored (email case, E.164); throws a 400 ServiceError naming the rule. */
  normaliseHandle(handle: PersonHandle): PersonHandle;
  /** Creates an anonymous person (and publishes AnonymousPersonCreated_v1). */
  createAnonymous(
    orgId: string,
    options: { region?: string; analytics: AnalyticsContext },
  ): Promise<PersonRecord>;
  /** An anonymous person as createAnonymous would make it, stored only by its `create`. */
  prospectAnonymous(
    orgId: string,
    options: { region?: string; analytics: AnalyticsContext },
  ): ProspectivePerson;
  /**
   * Creates a regular, active person holding these handles (normalised first; `verified` when the
   * caller has proof, such as an SSO provider vouching for the email) and publishes PersonCreated_v1.
   * A handle another person holds (also when two calls race) is a 409 ServiceError.
   */
  createWithHandles(
    orgId: string,
    options: {
      handles: Array<PersonHandle & { verified?: boolean }>;
      region?: string;
      analytics: AnalyticsContext;
    },
  ): Promise<PersonRecord>;
  /** A person as createWithHandles would make it (handles normalised), stored only by its `create`. */
  prospectWithHandles(
    orgId: string,
    options: {
      handles: Array<PersonHandle & { verified?: boolean }>;
      region?: string;
      analytics: AnalyticsContext;
    },
  ): ProspectivePerson;
  /**
   * Marks a handle the person holds as verified, in the caller's transaction, when the caller has
   * proof that it reaches them (a password reset link sent to that address was followed). Never
   * unmarks. False when the person does not hold the handle (nothing changes).
   */
  markVerified(
    orgId: string,
    personId: string,
    handle: PersonHandle,
    options: { tx: Transaction },
  ): Promise<boolean>;
  /** The claim that carries a person's groups in this organization's tokens. @default 'groups' */
  groupsClaimName(orgId: string): Promise<string>;
}

/** What events' analytics_metadata is made from: the request that caused them. */
export interface AnalyticsContext {
  clientIpAddress?: string;
  userAgent?: string;
  origin?: string;
  /** A UUID the client sent to correlate its events; a fresh one otherwise. */
  correlationId?: string;
}

/** Provided by the persons plugin. */
export const personDirectory = defineCapability<PersonDirectory>('personDirectory');
