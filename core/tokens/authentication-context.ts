/**
 * The Authentication Method Reference values (RFC 8176) of the service's factors (the reference's
 * FactorMethod names): what ID tokens carry in `amr`. A factor without a registered value is left out.
 */
const AMR_OF: Readonly<Record<string, string>> = {
  password: 'pwd',
  oidc: 'fed',
  saml: 'fed',
  totp: 'otp',
  otp_via_email: 'otp',
  otp_via_sms: 'sms',
  email_link: 'otp',
  webauthn: 'hwk',
};

/** `amr` for the factors of a sign-in, in order, each once; `mfa` added when two or more differ. */
export function amrOf(methods: readonly string[]): string[] {
  const values = [...new Set(methods.flatMap((m) => (AMR_OF[m] ? [AMR_OF[m]] : [])))];
  if (new Set(methods).size > 1) values.push('mfa');
  return values;
}

/** The Authentication Context Class References this service answers in `acr`: one factor or more. */
export const ACR = {
  oneFactor: 'urn:identity-service:acr:1fa',
  multiFactor: 'urn:identity-service:acr:2fa',
} as const;

/** The `acr` a sign-in with these factors meets. */
export const acrOf = (methods: readonly string[]): string =>
  new Set(methods).size > 1 ? ACR.multiFactor : ACR.oneFactor;

/** Whether a sign-in that meets `met` satisfies a request for `wanted` (2fa satisfies 1fa). */
export const acrSatisfies = (met: string, wanted: string): boolean =>
  wanted === met || (met === ACR.multiFactor && wanted === ACR.oneFactor);
