/**
 * The public entry for plugin authors: `import { definePlugin, ... } from 'identity-service/core'`.
 * Everything a plugin needs is exported here; anything else under core/ is internal and may change.
 * The package ships TypeScript source: Bun and Deno run it as is, Node through a TypeScript loader.
 */

// Tools every plugin may use: batching of reads and writes, per-key rate limits, address checks.
export { batchGate } from './batching/batch-gate.ts';
export { createBatchLoader } from './batching/batch-loader.ts';
export {
  type Batching,
  batchingFor,
  createGroupCommit,
  type GroupCommit,
  type GroupCommitOptions,
} from './batching/group-commit.ts';
export { createReplicaCache, type ReplicaCache } from './cache/replica-cache.ts';
export { type AttributeStoreApi, attributeStore } from './capabilities/attribute-store.ts';
export {
  type EmailCodeOutcome,
  type EmailLinkUse,
  type EmailSignedIn,
  type HostedLoginEmailCodes,
  type HostedLoginLink,
  hostedLoginEmailCodes,
  type SentEmailCode,
} from './capabilities/hosted-login-email-codes.ts';
export {
  type HostedLoginPasskeys,
  hostedLoginPasskeys,
  type PasskeyCeremony,
  type PasskeyRefusal,
} from './capabilities/hosted-login-passkeys.ts';
export {
  type HostedLogin,
  type HostedLoginSignIn,
  type HostedLoginSso,
  hostedLoginSso,
} from './capabilities/hosted-login-sso.ts';
export {
  type AccessTokenClaims,
  type AccessTokenRequest,
  type ActorClaim,
  DEVICE_CODE_GRANT,
  type DPoPCheck,
  HOSTED_HANDLE_TYPES,
  type HostedHandleType,
  type OAuth2Server,
  type OAuthClient,
  type OAuthClientUiConfiguration,
  type OAuthDeviceAuthorization,
  type OAuthDeviceAuthorizationResponse,
  OAuthError,
  type OAuthErrorCode,
  type OAuthGrant,
  type OAuthGrantRequest,
  type OAuthGrantType,
  type OAuthPushedAuthorization,
  type OAuthPushedAuthorizationResponse,
  type OAuthTokenResponse,
  type OAuthTokenStore,
  oauth2Server,
  type SignedAccessToken,
} from './capabilities/oauth2-server.ts';
export {
  type PasswordAuthenticator,
  type PasswordCheck,
  passwordAuthenticator,
} from './capabilities/password-authenticator.ts';
// Capabilities and hook points shared by the built-in plugins.
export {
  type AnalyticsContext,
  eventHandle,
  eventHandleOf,
  HANDLE_TYPES,
  type HandleType,
  type HeldHandle,
  isHandleType,
  type PersonDirectory,
  type PersonHandle,
  type PersonRecord,
  type ProspectivePerson,
  personDirectory,
} from './capabilities/person-directory.ts';
export {
  type CompletedSignIn,
  type SignInCompletion,
  signInCompletion,
} from './capabilities/sign-in-completion.ts';
export {
  type SsoAuthenticator,
  type SsoChoice,
  type SsoFailed,
  type SsoFinish,
  type SsoSignedIn,
  type SsoStartRefusal,
  type SsoStoredSignIn,
  ssoAuthenticator,
} from './capabilities/sso-authenticator.ts';
export {
  type OpenedSsoCredential,
  type SsoCredentialSummary,
  type SsoCredentials,
  ssoCredentials,
} from './capabilities/sso-credentials.ts';
export {
  type InvalidReason,
  type IssuedToken,
  type IssueRequest,
  type LogoutTokenRequest,
  type TokenIssuer,
  type TokenRevocation,
  tokenIssuer,
  type VerifiedIdToken,
} from './capabilities/token-issuer.ts';
export { type Config, ConfigError, type Env } from './config.ts';
export {
  type Capability,
  type CapabilityMap,
  defineCapability,
  type Implementations,
  type Provision,
} from './contract/capabilities.ts';
export {
  defineHook,
  type HookAttachment,
  type HookHandler,
  type HookPoint,
  type Hooks,
} from './contract/hooks.ts';
export {
  declareSettings,
  envInteger,
  envRate,
  envText,
  flag,
  integer,
  type OptionsOf,
  oneOf,
  partialRate,
  type Rate,
  rate,
  type Setting,
  type SettingsSchema,
  text,
} from './contract/settings.ts';
export { arrayLiteral, prepared } from './db/prepared.ts';
export type { SealedColumn } from './db/reseal.ts';
// The retry schedule of deliveries to customers' URLs (webhooks, back-channel logout tokens).
export {
  backoffMs,
  nextAfterFailure,
  RETRY_WINDOW_MS,
  scheduledRetryMs,
} from './delivery/retry-schedule.ts';
// Errors, configuration and logging.
export {
  CoreErrors,
  defineErrors,
  detail,
  type ErrorCodeOf,
  type ErrorSpec,
  type ErrorTable,
  ServiceError,
  type ServiceErrorOptions,
} from './errors.ts';
// Events: the catalogue, trigger names, ingestion of submitted events.
export { eventCatalogue, eventDefinition } from './events/catalogue/index.ts';
export { isRfc3339 } from './events/formats.ts';
export {
  buildSubmitted,
  type IngestRules,
  readIngestBody,
  type SubmittedEvent,
  submittedEvents,
} from './events/ingest.ts';
export { buildEvent } from './events/metadata.ts';
export { type AuthenticationDetails, PasswordChangeInitiator } from './events/shared-types.ts';
export { ACCEPTED_TRIGGER_NAMES, acceptedTriggerName, triggerListName } from './events/trigger-names.ts';
export type {
  EventMembers,
  EventMetadata,
  EventName,
  EventPublisher,
  ServiceEvent,
} from './events/types.ts';
export { EVENTS_TOPIC } from './events/types.ts';
export {
  deletePersonCredential,
  type PersonCredential,
  personCredentials,
} from './factors/credentials.ts';
export {
  type AuthenticationPolicies,
  type AuthenticationPolicy,
  authenticationPolicies,
  defaultPolicy,
  FIRST_FACTORS,
  type FirstFactor,
  SECOND_FACTORS,
  type SecondFactor,
} from './factors/policy.ts';
export { checkSecondFactor, type SecondFactorOutcome } from './factors/second-factor.ts';
export { bodyDepthOption } from './http/body-depth.ts';
export { type BrowserBinding, browserBinding, browserDigest } from './http/browser-binding.ts';
export { addressBucket, type RequestContext, requestContextOf } from './http/client.ts';
export { consistentWrite } from './http/consistency.ts';
export { CSS_COLOR_RULE, isCssColor } from './http/css-color.ts';
export type { DirectAnswer, DirectRoute } from './http/direct-routes.ts';
// HTTP conventions: the envelope, consistency headers, validation.
export { ErrorEnvelopeSchema, errorResponses, ok, resultOf, writeErrorResponses } from './http/envelope.ts';
export { type IfMatch, ifMatchOf, requireIfMatch, strongEtag } from './http/etag.ts';
export { formPostParams, formPostRedirect } from './http/form-post-callback.ts';
export type { HeaderNames } from './http/headers.ts';
// Pages for people (reset, verification): no script, strict CSP, double-submit forms.
export {
  cookieOf,
  escapeHtml,
  formGuard,
  hostedPage,
  type PageSources,
  pageHeaders,
  pageResponse,
  pageStyleSource,
  readForm,
  styleSourceOf,
} from './http/hosted-page.ts';
export { jwksRenderer } from './http/jwks-response.ts';
export { optionalJson, refuseArrayBody } from './http/object-body.ts';
export {
  API_KEY_SECURITY,
  consistencyHeaders,
  ErrorJson,
  errorDoc,
  errorDocs,
  ifMatchHeaders,
  passThrough,
  routeDetail,
  writeErrorDocs,
} from './http/openapi-docs.ts';
export { requestLogFields, setRequestOrg } from './http/request-facts.ts';
export { urlPathOf } from './http/request-target.ts';
export {
  type OrganizationSettingsRoutes,
  organizationSettingsRoutes,
} from './http/settings-routes.ts';
export { analyticsMetadata, analyticsReader, requestContextReader } from './http/sign-in-context.ts';
export { exactObject, NoQuery, parseOrThrow, unchangeable } from './http/validation.ts';
// Identifiers and secrets.
export {
  base64url,
  constantTimeEqual,
  fromBase64url,
  isUuid,
  randomSecret,
  sha256,
  toHex,
  UUID_PATTERN,
  uuidString,
  uuidv7,
} from './ids.ts';
export type { LogFields, Logger } from './log.ts';
// Messages to people: templates a deployment may replace, durable sending through the bus.
export type { MessageCounters, MessageOutcome } from './messaging/counters.ts';
export type { Messages } from './messaging/messages.ts';
export { MESSAGES_TOPIC, type PreparedMessage, type QueuedMessage } from './messaging/queue.ts';
export {
  defineMessageTemplate,
  type MessageTemplate,
  type RenderedMessage,
  type TemplateRenderer,
} from './messaging/templates.ts';
// Metrics: counters, histograms and gauges with fixed labels (`ctx.metrics`), served on METRICS_PORT.
export {
  type CounterMetric,
  type CounterSeries,
  type GaugeMetric,
  type GaugeSeries,
  type GaugeSpec,
  type HistogramMetric,
  type HistogramSeries,
  type HistogramSpec,
  LATENCY_BUCKETS,
  type LabelledMetric,
  type MetricLabels,
  type MetricSpec,
  type Metrics,
} from './metrics/types.ts';
export {
  bareHost,
  classifyAddress,
  isIpLiteralHost,
  isLocalhostName,
  isPublicAddress,
} from './net/address.ts';
export type { OrganizationStore } from './organizations/store.ts';
export { beforePersonDeleted, type PersonDeletion } from './persons/before-person-deleted.ts';
export { type PersonDisabling, personDisabled } from './persons/person-disabled.ts';
// The plugin contract.
export {
  definePlugin,
  defineService,
  type PluginContext,
  type PluginDefinition,
  type PluginParts,
  type ServiceContext,
  type ServiceDefinition,
  type Worker,
} from './plugin.ts';
// Ports.
export type { Clock } from './ports/clock.ts';
export {
  ack,
  type ConsumeOptions,
  type Delivered,
  drop,
  type EventBus,
  type Handler,
  type JsonValue,
  type Outcome,
  type OutgoingMessage,
  retry,
  type Subscription,
  type TopicStats,
} from './ports/event-bus.ts';
export type {
  DeliveryErrorKind,
  DeliveryRequest,
  DeliveryResult,
  HttpDelivery,
} from './ports/http-delivery.ts';
export type { MessageRecipient, Messenger, OutboundMessage, SendResult } from './ports/messenger.ts';
export {
  type GuardedFetch,
  GuardedFetchError,
  type GuardedRequestInit,
  type OutboundRequests,
} from './ports/outbound-requests.ts';
export { type SecretBox, SecretBoxError } from './ports/secret-box.ts';
export type { Jwks, PublicJwk, Signer, SignOptions } from './ports/signer.ts';
export { publicJwkOf } from './ports/signer.ts';
export type { Database, Migration, MigrationSet, Storage, Transaction } from './ports/storage.ts';
export {
  createMemoryBuckets,
  createSharedBuckets,
  createTokenBuckets,
  type SharedBucketOptions,
  type TakeResult,
  type TokenBucketOptions,
  type TokenBuckets,
} from './rate-limit/index.ts';
// SSO providers: a provider is a value the sso plugin lists; third parties publish their own.
export {
  defineSsoProvider,
  type FromOptions,
  type SsoCredentialContext,
  type SsoEndpoints,
  type SsoProfile,
  type SsoProfileContext,
  type SsoProvider,
} from './sso/define-provider.ts';
export {
  credentialRedirectUri,
  HOSTED_LOGIN_CALLBACK_PATH,
  SIGN_IN_CALLBACK_PATH,
} from './sso/redirect-uris.ts';
export { isWellFormedText, quoted, startsWithBom, unstorableTextRule } from './text.ts';
export {
  grantedResource,
  isUnderPublicBaseUrl,
  ONE_RESOURCE,
  organizationAudience,
  requestedResource,
  resourceRefusal,
} from './tokens/audience.ts';
export { ACR, acrOf, acrSatisfies, amrOf } from './tokens/authentication-context.ts';
export {
  beforeTokenIssued,
  type TokenAuthentication,
  type TokenDraft,
  type TokenHookResult,
  type TokenMintedContent,
} from './tokens/before-token-issued.ts';
export { DPOP_SIGNING_ALGORITHMS } from './tokens/dpop-algorithms.ts';
export { isIssuerOf, ORGANIZATION_ISSUER_PATH, organizationIssuer } from './tokens/issuers.ts';
export {
  ACCESS_TOKEN_CLAIMS,
  DEFAULT_GROUPS_CLAIM,
  ID_TOKEN_CLAIMS,
  isFreeGroupsClaimName,
  REGISTERED_CLAIMS,
  RESERVED_CLAIMS,
  reservedClaimOf,
  reservedClaims,
} from './tokens/reserved-claims.ts';
export { type PersonTokensRevocation, revokePersonTokens } from './tokens/revoke-person-tokens.ts';
export {
  collectServiceClaims,
  SERVICE_CLAIMS,
  type ServiceClaimName,
  type ServiceClaims,
  type ServiceClaimsRequest,
  serviceTokenClaims,
} from './tokens/service-claims.ts';
export { TOKEN_KEYS_OWNER } from './tokens/token-keys.ts';
export { onTokenRevoked, type TokenRevoked } from './tokens/token-revoked.ts';
