import { jwtVerify, SignJWT } from 'jose';
import {
  type PersonDirectory,
  type PersonHandle,
  type PersonRecord,
  personDirectory,
} from '../../core/capabilities/person-directory.ts';
import { type IssueRequest, type TokenIssuer, tokenIssuer } from '../../core/capabilities/token-issuer.ts';
import { definePlugin, type PluginDefinition } from '../../core/plugin.ts';
import type { JsonValue } from '../../core/ports/event-bus.ts';
import { beforeTokenIssued, type TokenDraft } from '../../core/tokens/before-token-issued.ts';

/**
 * Stand-ins for the persons and tokens plugins, for the password plugin's tests while those are written
 * in parallel: an in-memory person directory and an HS256 token issuer that runs beforeTokenIssued as
 * the real one does (so a handler's 403 blocks the issuance). Every test reaches them through
 * `identityStubs()`; switching to the real plugins means changing this one function.
 */
export function identityStubs() {
  const persons = new Map<string, PersonRecord>();
  const key = crypto.getRandomValues(new Uint8Array(32));
  const issued: IssueRequest[] = [];
  /** Checks a token the stub issued, as the tokens plugin's validate does. */
  async function validate(token: string): ReturnType<TokenIssuer['validate']> {
    try {
      const { payload } = await jwtVerify(token, key);
      return { valid: true, claims: JSON.parse(JSON.stringify(payload)) };
    } catch {
      return { valid: false, reason: 'bad_signature' };
    }
  }
  const norm = (h: PersonHandle): PersonHandle => ({
    type: h.type,
    value: h.type === 'email_address' ? h.value.trim().toLowerCase() : h.value.trim(),
  });
  const same = (a: PersonHandle, b: PersonHandle) => a.type === b.type && a.value === b.value;

  function addPerson(orgId: string, handles: PersonHandle[], extra: Partial<PersonRecord> = {}) {
    const person: PersonRecord = {
      personId: crypto.randomUUID(),
      orgId,
      personType: 'regular',
      active: true,
      region: 'us-iowa',
      handles: handles.map(norm),
      groups: [],
      createdAt: new Date().toISOString(),
      ...extra,
    };
    persons.set(person.personId, person);
    return person;
  }

  const directory: PersonDirectory = {
    get: async (orgId, personId) => {
      const p = persons.get(personId);
      return p?.orgId === orgId ? p : undefined;
    },
    findByHandle: async (orgId, handle) =>
      [...persons.values()].find((p) => p.orgId === orgId && p.handles.some((h) => same(h, norm(handle)))),
    normaliseHandle: norm,
    createAnonymous: async (orgId) => addPerson(orgId, [], { personType: 'anonymous' }),
    groupsClaimName: async () => 'groups',
  };

  const personsStub = definePlugin({
    id: 'persons-stub',
    provides: { personDirectory },
    setup: () => ({ provide: { personDirectory: directory } }),
  });

  const tokensStub = definePlugin({
    id: 'tokens-stub',
    provides: { tokenIssuer },
    declares: [beforeTokenIssued],
    setup(ctx) {
      const issuer: TokenIssuer = {
        async issue(request) {
          issued.push(request);
          const now = Math.floor(Date.now() / 1000);
          const claims: Record<string, JsonValue> = {
            iss: ctx.config.publicBaseUrl,
            sub: request.personId,
            oid: request.orgId,
            person_id: request.personId,
            authenticated_methods: request.methods,
          };
          if (request.issuer !== 'mint') {
            const draft: TokenDraft = {
              orgId: request.orgId,
              personId: request.personId,
              issuer: request.issuer,
              claims,
              content: {
                aud: request.orgId,
                iss: ctx.config.publicBaseUrl,
                sub: request.personId,
                region: 'us-iowa',
                first_token: true,
                groups_claim_name: 'groups',
                authentications: request.authentications,
                request_metadata: {},
              },
            };
            for (const r of await ctx.hooks.run(beforeTokenIssued, draft)) Object.assign(claims, r?.claims);
          }
          const tokenId = crypto.randomUUID();
          const token = await new SignJWT(claims)
            .setProtectedHeader({ alg: 'HS256' })
            .setJti(tokenId)
            .setIssuedAt(now)
            .setExpirationTime(now + 3600)
            .sign(key);
          return { token, tokenId, claims, firstToken: true, issuedAt: now, expiresAt: now + 3600 };
        },
        validate,
      };
      return { provide: { tokenIssuer: issuer } };
    },
  });

  const plugins: PluginDefinition[] = [personsStub, tokensStub];
  return { plugins, addPerson, persons, issued, validate };
}
