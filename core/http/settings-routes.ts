import { Elysia } from 'elysia';
import * as v from 'valibot';
import type { ServiceContext } from '../plugin.ts';
import { consistentWrite } from './consistency.ts';
import { errorResponses, ok, resultOf, writeErrorResponses } from './envelope.ts';
import { refuseArrayBody } from './object-body.ts';
import { consistencyHeaders, routeDetail } from './openapi-docs.ts';

/** An organization's settings object: a valibot object schema of the members GET returns and PUT sets. */
type SettingsObject = v.ObjectSchema<v.ObjectEntries, v.ErrorMessage<v.ObjectIssue> | undefined>;

export interface OrganizationSettingsRoutes<S extends SettingsObject> {
  /** The path, such as `/organizations/roles-settings`. */
  path: string;
  /** The members, each with its rule and a description for the OpenAPI document. */
  schema: S;
  /** The part of the operation ids after Get/Put, such as `OrganizationsRolesSettings`. */
  operation: string;
  /** What the settings are about, in the summaries: `"The organization's <subject> settings"`. */
  subject: string;
  /** The OpenAPI tag. */
  tag: string;
  /** What the settings do, for the OpenAPI document. */
  description: string;
  read(orgId: string): Promise<v.InferOutput<S>>;
  write(orgId: string, settings: v.InferOutput<S>): Promise<void>;
}

/**
 * GET and PUT of one organization's settings object: authenticated by the organization's API key, the
 * PUT body validated whole (an array refused), written with the consistency headers honoured, and
 * answered with what was set.
 *
 * @example
 * app.use(organizationSettingsRoutes(ctx, {
 *   path: '/organizations/roles-settings', schema, operation: 'OrganizationsRolesSettings',
 *   subject: 'roles', tag: 'Roles and permissions', description: '...',
 *   read: async (orgId) => ({ roles_in_tokens: await store.rolesInTokens(orgId) }),
 *   write: (orgId, s) => store.setRolesInTokens(orgId, s.roles_in_tokens),
 * }));
 */
export function organizationSettingsRoutes<S extends SettingsObject>(
  ctx: ServiceContext,
  o: OrganizationSettingsRoutes<S>,
) {
  const detail = (method: 'Get' | 'Put', summary: string) =>
    routeDetail([o.tag])(`${method}${o.operation}`, summary, o.description);
  // Elysia sees the plain object schema: its types cannot follow a schema left generic.
  const schema: SettingsObject = o.schema;
  return new Elysia()
    .use(ctx.auth)
    .get(o.path, async ({ org }) => ok(await o.read(org.id)), {
      apiKey: true,
      response: { 200: resultOf(schema), ...errorResponses },
      detail: detail('Get', `The organization's ${o.subject} settings`),
    })
    .put(
      o.path,
      async ({ org, body, request }) => {
        // Validated already, by the same schema; parsed again here for its type (a settings PUT is rare).
        const settings = v.parse(o.schema, body);
        await consistentWrite(request, ctx.headers, () => o.write(org.id, settings));
        return ok(settings);
      },
      {
        apiKey: true,
        parse: 'json',
        transform: refuseArrayBody,
        body: schema,
        headers: consistencyHeaders(ctx.headers),
        response: { 200: resultOf(schema), ...errorResponses, ...writeErrorResponses },
        detail: detail('Put', `Set the organization's ${o.subject} settings`),
      },
    );
}
