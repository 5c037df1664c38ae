/**
 * A software passkey authenticator for the benchmarks: an ES256 key pair made with WebCrypto, and the
 * registration ("none" attestation) and assertion answers a browser would send, built per the WebAuthn
 * spec (authenticator data, client data JSON, a signature over authData || SHA-256(clientDataJSON)).
 * Independent of the library the service verifies with: its own CBOR encoder, its own DER signature.
 */

type Bytes = Uint8Array<ArrayBuffer>;

const encoder = new TextEncoder();

export const b64url = (bytes: Bytes): string => Buffer.from(bytes).toString('base64url');
const fromB64url = (text: string): Bytes => new Uint8Array(Buffer.from(text, 'base64url'));

const concat = (...parts: Bytes[]): Bytes => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

const sha256 = async (bytes: Bytes): Promise<Bytes> =>
  new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));

const uint32 = (n: number): Bytes => {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, n);
  return out;
};

/** A CBOR value as WebAuthn uses them: integers, byte and text strings, maps. */
type Cbor = number | string | Bytes | Map<number | string, Cbor>;

/** RFC 8949 encoding of the values above (definite lengths). */
function cbor(value: Cbor): Bytes {
  const head = (major: number, n: number): Bytes => {
    if (n < 24) return Uint8Array.of((major << 5) | n);
    if (n < 256) return Uint8Array.of((major << 5) | 24, n);
    if (n < 65536) return Uint8Array.of((major << 5) | 25, n >> 8, n & 0xff);
    return concat(Uint8Array.of((major << 5) | 26), uint32(n));
  };
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') {
    const bytes = encoder.encode(value);
    return concat(head(3, bytes.length), bytes);
  }
  if (value instanceof Uint8Array) return concat(head(2, value.length), value);
  const parts = [head(5, value.size)];
  for (const [k, v] of value) parts.push(cbor(k), cbor(v));
  return concat(...parts);
}

/** An ECDSA signature from WebCrypto (r || s, 32 bytes each) as ASN.1 DER, as authenticators send it. */
function der(raw: Bytes): Bytes {
  const integer = (bytes: Bytes) => {
    let i = 0;
    while (i < bytes.length - 1 && bytes[i] === 0) i++;
    const trimmed = bytes.slice(i);
    const body = trimmed[0]! & 0x80 ? concat(Uint8Array.of(0), trimmed) : trimmed;
    return concat(Uint8Array.of(0x02, body.length), body);
  };
  const seq = concat(integer(raw.slice(0, 32)), integer(raw.slice(32)));
  return concat(Uint8Array.of(0x30, seq.length), seq);
}

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

/** The JSON of a `PublicKeyCredential` as `credential.toJSON()` writes it. */
export interface CredentialJSON {
  id: string;
  rawId: string;
  type: 'public-key';
  response: Record<string, string | string[]>;
  clientExtensionResults: Record<string, never>;
  authenticatorAttachment: 'platform';
}

/** One discoverable credential of one person on one relying party, with its sign counter. */
export class SoftwareAuthenticator {
  private counter = 0;
  private constructor(
    private readonly keys: CryptoKeyPair,
    readonly credentialId: Bytes,
    private readonly rpId: string,
    private readonly origin: string,
    private userHandle = '',
  ) {}

  static async create(rpId: string, origin: string): Promise<SoftwareAuthenticator> {
    const keys = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
      'sign',
      'verify',
    ])) as CryptoKeyPair;
    return new SoftwareAuthenticator(keys, crypto.getRandomValues(new Uint8Array(16)), rpId, origin);
  }

  get publicKey(): CryptoKey {
    return this.keys.publicKey;
  }

  private clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string): Bytes {
    return encoder.encode(JSON.stringify({ type, challenge, origin: this.origin, crossOrigin: false }));
  }

  /** The answer to `navigator.credentials.create` for `options` (the registration options' JSON). */
  async register(options: { challenge: string; user: { id: string } }): Promise<CredentialJSON> {
    this.userHandle = options.user.id;
    const jwk = await crypto.subtle.exportKey('jwk', this.keys.publicKey);
    // COSE_Key: kty EC2 (2), alg ES256 (-7), crv P-256 (1), x, y.
    const coseKey = cbor(
      new Map<number, Cbor>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, fromB64url(jwk.x!)],
        [-3, fromB64url(jwk.y!)],
      ]),
    );
    const length = Uint8Array.of(this.credentialId.length >> 8, this.credentialId.length & 0xff);
    const authData = concat(
      await sha256(encoder.encode(this.rpId)),
      Uint8Array.of(FLAG_UP | FLAG_UV | FLAG_AT),
      uint32(0),
      new Uint8Array(16), // AAGUID: none
      length,
      this.credentialId,
      coseKey,
    );
    const attestationObject = cbor(
      new Map<string, Cbor>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authData],
      ]),
    );
    const id = b64url(this.credentialId);
    return {
      id,
      rawId: id,
      type: 'public-key',
      response: {
        clientDataJSON: b64url(this.clientData('webauthn.create', options.challenge)),
        attestationObject: b64url(attestationObject),
        transports: ['internal'],
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /** The answer to `navigator.credentials.get` for a challenge; the sign counter goes up by one. */
  async assert(challenge: string): Promise<CredentialJSON> {
    const clientDataJSON = this.clientData('webauthn.get', challenge);
    const authData = concat(
      await sha256(encoder.encode(this.rpId)),
      Uint8Array.of(FLAG_UP | FLAG_UV),
      uint32(++this.counter),
    );
    const signed = concat(authData, await sha256(clientDataJSON));
    const raw = new Uint8Array(
      await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, this.keys.privateKey, signed),
    );
    const id = b64url(this.credentialId);
    return {
      id,
      rawId: id,
      type: 'public-key',
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(der(raw)),
        userHandle: this.userHandle,
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }
}

/** A message and its WebCrypto signature (r || s) by a fresh P-256 key: what the bound verifies. */
export async function signedSample() {
  const keys = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, [
    'sign',
    'verify',
  ])) as CryptoKeyPair;
  const message = crypto.getRandomValues(new Uint8Array(37 + 32));
  const signature = await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, keys.privateKey, message);
  return {
    verify: () =>
      crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, keys.publicKey, signature, message),
  };
}
