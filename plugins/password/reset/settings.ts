import { eq } from 'drizzle-orm';
import * as v from 'valibot';
import { organizationSettingsRoutes } from '../../../core/http/settings-routes.ts';
import { bareHost, classifyAddress, isLocalhostName } from '../../../core/net/address.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { passwordResetSettings } from '../schema.ts';

const RESET_URL_RULE =
  'must be an https URL (http only on localhost or a loopback address) of at most 2000 characters, without credentials or a fragment, or null';

/** Whether `text` may be an organization's reset page: the token is appended to it as `token=`. */
export function isResetUrl(text: string): boolean {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  if (text.length > 2000 || url.username || url.password || url.hash || text.includes('#')) return false;
  if (url.protocol === 'https:') return true;
  const loopback =
    isLocalhostName(url.hostname) || classifyAddress(bareHost(url.hostname))?.range === 'loopback';
  return url.protocol === 'http:' && loopback;
}

/** The link a reset message carries: the organization's page with `token=` appended, else the hosted page. */
export function resetLink(resetUrl: string | null, hostedPage: string, token: string): string {
  const base = resetUrl ?? hostedPage;
  return `${base}${base.includes('?') ? '&' : '?'}token=${token}`;
}

const SettingsSchema = v.object({
  reset_url: v.pipe(
    v.nullable(v.pipe(v.string(), v.check(isResetUrl, RESET_URL_RULE))),
    v.description(
      "The organization's own reset page. Reset messages link to it with `token=<token>` appended, and the page calls POST /authenticate/password/reset/confirm. null: the service's hosted page.",
    ),
  ),
});

/** The organizations' reset settings. Read once per reset request, so not cached. */
export function createResetSettings(storage: Storage, clock: Clock) {
  const t = passwordResetSettings;
  return {
    async resetUrl(orgId: string): Promise<string | null> {
      const [row] = await storage.db.select({ url: t.resetUrl }).from(t).where(eq(t.orgId, orgId));
      return row?.url ?? null;
    },
    async setResetUrl(orgId: string, resetUrl: string | null): Promise<void> {
      const updatedAt = new Date(clock.now());
      await storage.db
        .insert(t)
        .values({ orgId, resetUrl, updatedAt })
        .onConflictDoUpdate({ target: t.orgId, set: { resetUrl, updatedAt } });
    },
  };
}

export type ResetSettings = ReturnType<typeof createResetSettings>;

/** GET, PUT /organizations/password-reset-settings: the organization's own reset page. */
export function resetSettingsRoutes(ctx: ServiceContext, store: ResetSettings) {
  return organizationSettingsRoutes(ctx, {
    path: '/organizations/password-reset-settings',
    schema: SettingsSchema,
    operation: 'OrganizationsPasswordResetSettings',
    subject: 'password reset',
    tag: 'Password reset',
    description:
      "reset_url: the organization's own password reset page, or null (the default) for the service's hosted page at /password/reset. Reset links are the page with `token=<token>` appended.",
    read: async (orgId) => ({ reset_url: await store.resetUrl(orgId) }),
    write: (orgId, s) => store.setResetUrl(orgId, s.reset_url),
  });
}
