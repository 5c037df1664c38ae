/**
 * The OAuth 2.0 grants, for the plugin that stores what they need: the oauth2 plugin registers
 * client_credentials itself; the authorization endpoint's plugin (oauth2-authorize) registers
 * authorization_code and refresh_token with its code and family stores (stores.ts) through
 * oauth2Server.addGrant, and issues the mint API's tokens as these grants do. The one way another
 * plugin reaches into this one's code.
 */
export { authorizationCodeGrant } from './authorization-code.ts';
export { deviceCodeGrant } from './device-code.ts';
export {
  issueTokens,
  REFRESH_PREFIX,
  refuseRevoked,
  type TokenIssuing,
  USERINFO_CLAIMS,
} from './issue-tokens.ts';
export { refreshTokenGrant } from './refresh-token.ts';
export { parseScope, stillAllowedScope } from './scope.ts';
export type {
  ApprovedDevice,
  BurntCode,
  CodeRedemption,
  DeviceCodes,
  FamilyRevoker,
  GrantFamilies,
  GrantFamily,
  IssuedAccess,
  PolledDevice,
  PresentedRefresh,
  RedeemedCode,
} from './stores.ts';
