/**
 * The SecretBox port: encryption at rest. Sealed values name the key that sealed them, so the master
 * key can be rotated while older values still open. `context` binds a value to where it is stored
 * (for example `webhook:<id>:custom_headers`), so a sealed value copied elsewhere does not open.
 */
export interface SecretBox {
  seal(plaintext: string, context: string): Promise<string>;
  open(sealed: string, context: string): Promise<string>;
  /**
   * `seal` at once, for a box whose keys are in this process (the local keys adapter). Optional: a box
   * that asks a remote KMS has only `seal`. Hot paths use it when present and `seal` otherwise: a value
   * sealed or opened without a promise saves the request a turn of the event loop per value.
   */
  sealNow?(plaintext: string, context: string): string;
  /** `open` at once, where `sealNow` is (it throws SecretBoxError as `open` rejects with it). */
  openNow?(sealed: string, context: string): string;
  /** True when the value was sealed with a key other than the current one. */
  isStale(sealed: string): boolean;
  readonly currentKeyId: string;
}

export class SecretBoxError extends Error {
  constructor(
    readonly code: 'MALFORMED' | 'UNKNOWN_KEY' | 'TAMPERED',
    message: string,
  ) {
    super(message);
    this.name = 'SecretBoxError';
  }
}
