/** A POST to a customer's URL. */
export interface DeliveryRequest {
  url: string;
  headers: Record<string, string | readonly string[]>;
  body: string;
  timeoutMs: number;
  /** Bytes of the response body to keep. @default 65536 */
  maxResponseBytes?: number;
}

export type DeliveryErrorKind =
  | 'invalid_url'
  | 'dns'
  | 'ssrf_refused'
  | 'connect'
  | 'tls'
  | 'timeout'
  | 'response_too_large'
  | 'network';

export interface DeliveryResult {
  /** True only for a 2xx answer. */
  ok: boolean;
  /** The HTTP status, when an answer arrived. */
  status?: number;
  errorKind?: DeliveryErrorKind;
  error?: string;
  latencyMs: number;
  /** The response body, cut at `maxResponseBytes`. */
  body: string;
  /** The address that was vetted and connected to. */
  address?: string;
}

/**
 * The HttpDelivery port: never throws; every failure comes back as a result. Redirects are never
 * followed, the resolved address is vetted against the SSRF policy and pinned for the connection.
 */
export interface HttpDelivery {
  post(request: DeliveryRequest): Promise<DeliveryResult>;
  close(): Promise<void>;
}
