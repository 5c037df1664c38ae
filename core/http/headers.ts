/** The header names of a deployment; `Service` is HEADER_PREFIX, so vendor clients work unchanged. */
export interface HeaderNames {
  orgId: string;
  apiKey: string;
  consistency: string;
  consistencyTimeout: string;
}

export const headerNames = (prefix: string): HeaderNames => ({
  orgId: `${prefix}-OrgID`,
  apiKey: `${prefix}-API-Key`,
  consistency: `${prefix}-Required-Consistency`,
  consistencyTimeout: `${prefix}-Required-Consistency-Timeout`,
});
