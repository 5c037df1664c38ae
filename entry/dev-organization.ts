import type { Config } from '../core/config.ts';
import type { Logger } from '../core/log.ts';
import type { Service } from '../core/service.ts';

/**
 * On the first start of an empty embedded database (outside production), creates a development
 * organization and prints its ID and API key once, so a newcomer can call the API at once.
 */
export async function ensureDevOrganization(
  service: Service,
  config: Config,
  log: Logger,
  // Standard error: standard output carries only JSON log lines, one object a line.
  print: (text: string) => void = console.error,
) {
  if (config.env === 'production' || service.ctx.storage.kind !== 'pglite') return;
  if ((await service.ctx.orgs.count()) > 0) return;
  const { organization, apiKey } = await service.ctx.orgs.create('Development');
  const h = service.ctx.headers;
  log.warn('development organization created; its API key is printed once on standard error', {
    organization_id: organization.id,
  });
  print(
    [
      '',
      'Development organization created (the API key is shown this once):',
      `  ${h.orgId}: ${organization.id}`,
      `  ${h.apiKey}: ${apiKey}`,
      `Try: curl -H '${h.orgId}: ${organization.id}' -H '${h.apiKey}: ${apiKey}' ${config.publicBaseUrl}/organizations`,
      '',
    ].join('\n'),
  );
}
