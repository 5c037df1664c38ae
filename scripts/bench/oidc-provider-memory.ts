/**
 * An in-memory adapter for node-oidc-provider without a size bound: its own development adapter keeps
 * 1,000 entries at most, and under a benchmark's thousands of codes and refresh tokens it forgot the
 * sessions of the browsers that were idle for a while (their next `prompt=none` said login_required).
 * Entries expire as that adapter's do; a grant's tokens are indexed for revokeByGrantId.
 */
import type { Adapter, AdapterFactory, AdapterPayload } from 'oidc-provider';

interface Entry {
  value: AdapterPayload;
  /** Milliseconds since the epoch, or undefined for never. */
  expires: number | undefined;
}

/** The models a grant's revocation removes, as its own adapter indexes them. */
const GRANTABLE = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'PreAuthorizedCode',
]);

export function unboundedMemoryAdapter(): AdapterFactory {
  const entries = new Map<string, Entry>();
  const sessionByUid = new Map<string, string>();
  const grantMembers = new Map<string, Set<string>>();
  const get = (key: string): AdapterPayload | undefined => {
    const e = entries.get(key);
    if (e?.expires !== undefined && e.expires <= Date.now()) {
      entries.delete(key);
      return undefined;
    }
    return e?.value;
  };
  return (model: string): Adapter => {
    const key = (id: string) => `${model}:${id}`;
    return {
      async upsert(id, payload, expiresIn) {
        entries.set(key(id), {
          value: payload,
          expires: typeof expiresIn === 'number' ? Date.now() + expiresIn * 1000 : undefined,
        });
        if (model === 'Session' && payload.uid) sessionByUid.set(payload.uid, id);
        if (payload.grantId && GRANTABLE.has(model)) {
          const members = grantMembers.get(payload.grantId) ?? new Set<string>();
          members.add(key(id));
          grantMembers.set(payload.grantId, members);
        }
      },
      async find(id) {
        return get(key(id));
      },
      async findByUid(uid) {
        const id = sessionByUid.get(uid);
        return id === undefined ? undefined : get(key(id));
      },
      async findByUserCode() {
        return undefined;
      },
      async consume(id) {
        const value = get(key(id));
        if (value) value.consumed = Math.floor(Date.now() / 1000);
      },
      async destroy(id) {
        const value = get(key(id));
        entries.delete(key(id));
        if (value?.grantId) grantMembers.get(value.grantId)?.delete(key(id));
        if (model === 'Session' && value?.uid) sessionByUid.delete(value.uid);
      },
      async revokeByGrantId(grantId) {
        for (const member of grantMembers.get(grantId) ?? []) entries.delete(member);
        grantMembers.delete(grantId);
      },
    };
  };
}
