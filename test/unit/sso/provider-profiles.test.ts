import { afterAll, describe, expect, it } from 'bun:test';
import type { GuardedFetch } from '../../../core/ports/outbound-requests.ts';
import { bitbucket } from '../../../plugins/sso/providers/bitbucket.ts';
import { facebook } from '../../../plugins/sso/providers/facebook.ts';
import { github } from '../../../plugins/sso/providers/github.ts';
import { gitlab } from '../../../plugins/sso/providers/gitlab.ts';

/**
 * The non-OIDC built-ins read the account from their REST APIs, which cannot be reached from here. A
 * loopback server answers with the shapes their documentation gives, and the providers' requests reach
 * it over real HTTP through the fetch they are given: only the origin is rewritten, so path, query,
 * headers and parsing are the real ones.
 */
const TOKEN = 'provider-access-token';
const answers: Record<string, unknown> = {
  'api.github.com/user': { id: 583231, login: 'octocat', name: 'The Octocat', avatar_url: 'https://a/1' },
  'api.github.com/user/emails': [
    { email: 'octocat@users.noreply.github.com', primary: false, verified: true },
    { email: 'octocat@github.example', primary: true, verified: true },
  ],
  'api.bitbucket.org/2.0/user': { uuid: '{d301aafa-d676-4ee0-88be-962be7417567}', display_name: 'Ada' },
  'api.bitbucket.org/2.0/user/emails': {
    values: [
      { email: 'old@bitbucket.example', is_primary: false, is_confirmed: true },
      { email: 'ada@bitbucket.example', is_primary: true, is_confirmed: false },
    ],
  },
  'gitlab.com/api/v4/user': {
    id: 1,
    username: 'john_smith',
    name: 'John Smith',
    email: 'john@gitlab.example',
    confirmed_at: '2012-05-23T09:05:22Z',
  },
  'graph.facebook.com/v19.0/me': { id: '10224', name: 'Mark', email: 'mark@facebook.example' },
};
const seen: { path: string; query: string; authorization: string | null }[] = [];
const api = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch(req) {
    const url = new URL(req.url);
    const path = url.pathname.slice(1);
    seen.push({ path, query: url.search, authorization: req.headers.get('authorization') });
    if (req.headers.get('authorization') !== `Bearer ${TOKEN}`)
      return new Response('{"message":"Bad credentials"}', { status: 401 });
    return path in answers ? Response.json(answers[path]) : new Response('{}', { status: 404 });
  },
});
afterAll(() => api.stop(true));

/**
 * The service's guarded fetch, standing in: the providers must make their requests through the one
 * they are given (a request through the global fetch would leave for the real API and fail here).
 */
const sent: string[] = [];
const guarded: GuardedFetch = (input, init) => {
  const url = new URL(input);
  sent.push(url.href);
  return fetch(`http://127.0.0.1:${api.port}/${url.host}${url.pathname}${url.search}`, {
    headers: init?.headers ?? {},
    redirect: 'manual',
  });
};
const credential = { clientId: 'c', clientSecret: 's', options: {}, now: 0, fetch: guarded };

describe('the profiles of the built-in providers without ID tokens', () => {
  it('GitHub: the numeric id, and the primary verified address from /user/emails', async () => {
    expect(await github.profile?.({ accessToken: TOKEN }, credential)).toEqual({
      subject: '583231',
      email: 'octocat@github.example',
      emailVerified: true,
      name: 'The Octocat',
      picture: 'https://a/1',
    });
    expect(seen.filter((s) => s.path.startsWith('api.github.com')).map((s) => s.path)).toEqual([
      'api.github.com/user',
      'api.github.com/user/emails',
    ]);
    expect(sent.filter((u) => u.includes('github'))).toEqual([
      'https://api.github.com/user',
      'https://api.github.com/user/emails',
    ]);
  });

  it('Bitbucket: the uuid, and the primary address, unverified until Bitbucket confirms it', async () => {
    expect(await bitbucket.profile?.({ accessToken: TOKEN }, credential)).toEqual({
      subject: '{d301aafa-d676-4ee0-88be-962be7417567}',
      email: 'ada@bitbucket.example',
      emailVerified: false,
      name: 'Ada',
    });
  });

  it('GitLab: the id, and the email verified once confirmed_at is set', async () => {
    expect(await gitlab.profile?.({ accessToken: TOKEN }, credential)).toEqual({
      subject: '1',
      email: 'john@gitlab.example',
      emailVerified: true,
      name: 'John Smith',
    });
  });

  it('Facebook: the id and the email the Graph API gives only when confirmed', async () => {
    expect(await facebook.profile?.({ accessToken: TOKEN }, credential)).toEqual({
      subject: '10224',
      email: 'mark@facebook.example',
      emailVerified: true,
      name: 'Mark',
    });
    expect(seen.find((s) => s.path === 'graph.facebook.com/v19.0/me')?.query).toBe('?fields=id,name,email');
  });

  it('fails, naming the endpoint and the status, when the API refuses the token', async () => {
    await expect(github.profile?.({ accessToken: 'revoked' }, credential)).rejects.toThrow(
      'the provider answered 401 to GET https://api.github.com/user',
    );
  });
});
