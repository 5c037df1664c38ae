import { Elysia } from 'elysia';
import * as v from 'valibot';
import { consistentWrite } from '../../../core/http/consistency.ts';
import { errorResponses, ok, resultOf, writeErrorResponses } from '../../../core/http/envelope.ts';
import { refuseArrayBody } from '../../../core/http/object-body.ts';
import { consistencyHeaders, routeDetail } from '../../../core/http/openapi-docs.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import type { PersonStore } from '../store/persons.ts';
import { GroupsSchema, MAX_GROUPS, parseGroupName, parsePersonId } from './input.ts';
import { SECURITY, TAGS } from './routes.ts';

const MembersSchema = v.object({
  persons: v.pipe(
    v.array(v.string()),
    v.minLength(1, 'must name at least one person'),
    v.maxLength(1000, 'must name at most 1000 persons'),
  ),
});

/** A person's groups, and a group's persons. Groups are made on first use. */
export function groupRoutes(ctx: ServiceContext, store: PersonStore) {
  const headers = consistencyHeaders(ctx.headers);
  const write = <T>(request: Request, fn: () => Promise<T>) => consistentWrite(request, ctx.headers, fn);
  const detail = routeDetail(TAGS, SECURITY);
  return new Elysia()
    .use(ctx.auth)
    .get(
      '/persons/:person_id/groups',
      async ({ org, params }) => ok((await store.get(org.id, parsePersonId(params.person_id))).groups),
      {
        apiKey: true,
        response: { 200: resultOf(v.array(v.string())), ...errorResponses },
        detail: detail('GetPersonsPersonIdGroups', "A person's groups", 'Sorted by name.'),
      },
    )
    .put(
      '/persons/:person_id/groups',
      async ({ org, params, body, request }) => {
        const id = parsePersonId(params.person_id);
        const groups = [...new Set(body.groups)];
        return ok(await write(request, () => store.setGroups(org.id, id, groups)));
      },
      {
        apiKey: true,
        parse: 'json',
        transform: refuseArrayBody,
        body: GroupsSchema,
        headers,
        response: { 200: resultOf(v.array(v.string())), ...errorResponses, ...writeErrorResponses },
        detail: detail(
          'PutPersonsPersonIdGroups',
          "Set a person's groups",
          `The person is in exactly these groups afterwards (at most ${MAX_GROUPS}; duplicates ignored; [] removes every membership). A group not yet named is made.`,
        ),
      },
    )
    .get(
      '/groups/:group_name/persons',
      async ({ org, params }) => ok(await store.members(org.id, parseGroupName(params.group_name))),
      {
        apiKey: true,
        response: { 200: resultOf(v.array(v.string())), ...errorResponses },
        detail: detail(
          'GetGroupsGroupNamePersons',
          "A group's persons",
          'Person IDs in creation order; 404 for a group this organization never named.',
        ),
      },
    )
    .post(
      '/groups/:group_name/persons',
      async ({ org, params, body, request, set }) => {
        const name = parseGroupName(params.group_name);
        const ids = [...new Set(body.persons.map((id, i) => parsePersonId(id, `body.persons[${i}]`)))];
        await write(request, () => store.addMembers(org.id, name, ids));
        set.status = 201;
        return {};
      },
      {
        apiKey: true,
        parse: 'json',
        transform: refuseArrayBody,
        body: MembersSchema,
        headers,
        response: { 201: v.object({}), ...errorResponses, ...writeErrorResponses },
        detail: detail(
          'PostGroupsGroupNamePersons',
          'Add persons to a group',
          'Every person must be of this organization (404 otherwise, adding none). The group is made on first use.',
        ),
      },
    )
    .delete(
      '/groups/:group_name/persons/:person_id',
      async ({ org, params, request }) => {
        const name = parseGroupName(params.group_name);
        const id = parsePersonId(params.person_id);
        await write(request, () => store.removeMember(org.id, name, id));
        return {};
      },
      {
        apiKey: true,
        headers,
        response: { 200: v.object({}), ...errorResponses, ...writeErrorResponses },
        detail: detail(
          'DeleteGroupsGroupNamePersonsPersonId',
          'Remove a person from a group',
          '404 when the person is not in the group.',
        ),
      },
    );
}
