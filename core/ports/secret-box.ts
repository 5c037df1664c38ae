/**
 * The SecretBox port: encryption at rest. Sealed values name the key that sealed them, so the master
 * key can be rotated while older values still open. `context` binds a value to where it is stored
 * (for example `webhook:<id>:custom_headers`), so a sealed value copied elsewhere does not open.
 */
export interface SecretBox {
  seal(plaintext: string, context: string): Promise<string>;
  open(sealed: string, context: string): Promise<string>;
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
