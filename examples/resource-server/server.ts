// Runs the example API: ISSUER, ORG_ID and RESOURCE name the identity service, the organization and
// this API's resource indicator; PORT where it listens (default 4000).
import { resourceApi } from './api.ts';

const need = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required (see docs/guides/resource-server.md)`);
  return value;
};
const port = Number(process.env.PORT ?? 4000);
const handle = resourceApi({
  issuer: need('ISSUER'),
  orgId: need('ORG_ID'),
  resource: need('RESOURCE'),
  publicUrl: `http://127.0.0.1:${port}`,
});
Bun.serve({ port, hostname: '127.0.0.1', fetch: handle });
console.log(`the example API listens on http://127.0.0.1:${port}`);
