import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { Elysia } from 'elysia';

/**
 * The API reference page at /docs: Swagger UI from the swagger-ui-dist package pinned in the lockfile,
 * served by the service itself. No request leaves the host (the page works offline, and no third party
 * serves script to an admin page); the Content-Security-Policy makes the browser hold to that.
 */
const ASSETS = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
} as const;
type Asset = keyof typeof ASSETS;

/** The paths of the page and its files (kept out of the OpenAPI document). */
export const DOCS_PATHS = ['/docs', '/docs/start.js', ...Object.keys(ASSETS).map((a) => `/docs/${a}`)];

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  // Swagger UI sets style attributes from its script.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

// Relative URLs: the page works at /docs behind a reverse proxy that mounts the service under a prefix.
const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Identity service API</title>
    <link rel="stylesheet" href="docs/swagger-ui.css" />
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="docs/swagger-ui-bundle.js"></script>
    <script src="docs/start.js"></script>
  </body>
</html>
`;

// validatorUrl null: Swagger UI would otherwise send the document to validator.swagger.io for a badge.
const START = `window.ui = SwaggerUIBundle({
  url: 'openapi.json',
  dom_id: '#swagger-ui',
  validatorUrl: null,
  deepLinking: true,
  tryItOutEnabled: false,
});
`;

const resolveFrom = createRequire(import.meta.url);
const cache = new Map<Asset, Promise<string>>();

/** An asset of the installed package, read once. */
function asset(name: Asset): Promise<string> {
  let read = cache.get(name);
  if (!read) {
    read = readFile(resolveFrom.resolve(`swagger-ui-dist/${name}`), 'utf8');
    read.catch(() => cache.delete(name));
    cache.set(name, read);
  }
  return read;
}

const assetResponse = async (name: Asset) =>
  new Response(await asset(name), {
    headers: headers(ASSETS[name], { 'cache-control': 'public, max-age=86400' }),
  });

const headers = (type: string, extra: Record<string, string> = {}) => ({
  'content-type': type,
  'x-content-type-options': 'nosniff',
  ...extra,
});

/** GET /docs and the files it loads, all from this service. */
export const docsUi = () =>
  new Elysia({ name: 'docs-ui' })
    .get(
      '/docs',
      () =>
        new Response(PAGE, {
          headers: headers('text/html; charset=utf-8', { 'content-security-policy': CSP }),
        }),
      { detail: { hide: true } },
    )
    .get(
      '/docs/start.js',
      () => new Response(START, { headers: headers('text/javascript; charset=utf-8') }),
      { detail: { hide: true } },
    )
    .get('/docs/swagger-ui.css', () => assetResponse('swagger-ui.css'), { detail: { hide: true } })
    .get('/docs/swagger-ui-bundle.js', () => assetResponse('swagger-ui-bundle.js'), {
      detail: { hide: true },
    });
