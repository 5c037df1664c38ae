import { defineService } from 'identity-service/core';
import { attributes } from 'identity-service/plugins/attributes';
import { password } from 'identity-service/plugins/password';
import { persons } from 'identity-service/plugins/persons';
import { builtInProviders, sso, ssoSignIn } from 'identity-service/plugins/sso';
import { tokens } from 'identity-service/plugins/tokens';
import { webhooks } from 'identity-service/plugins/webhooks';
import { acme } from './index.ts';

/**
 * A deployment with the built-in plugins whose SSO accepts Acme ID beside the nine built-in providers:
 * `SERVICE_CONFIG=examples/acme-sso-provider/service.config.ts npm start`. A credential with
 * `"provider": "acme"` and `"options": { "acme": { "domain": "example.acme-id.com" } }` then signs in
 * through Acme ID.
 */
export default defineService({
  plugins: [
    attributes(),
    webhooks(),
    persons(),
    tokens(),
    password(),
    sso({ providers: [...builtInProviders, acme] }),
    ssoSignIn(),
  ],
});
