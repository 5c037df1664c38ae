import { defineService } from './core/plugin.ts';
import { attributes } from './plugins/attributes/index.ts';
import { consents } from './plugins/consents/index.ts';
import { edge } from './plugins/edge/index.ts';
import { emailCodes } from './plugins/email-codes/index.ts';
import { factors } from './plugins/factors/index.ts';
import { oauth2 } from './plugins/oauth2/index.ts';
import { oauth2Authorize } from './plugins/oauth2-authorize/index.ts';
import { passkeys } from './plugins/passkeys/index.ts';
import { password } from './plugins/password/index.ts';
import { persons } from './plugins/persons/index.ts';
import { roles } from './plugins/roles/index.ts';
import { sdk } from './plugins/sdk/index.ts';
import { sso, ssoSignIn } from './plugins/sso/index.ts';
import { tokens } from './plugins/tokens/index.ts';
import { totp } from './plugins/totp/index.ts';
import { webhooks } from './plugins/webhooks/index.ts';

/**
 * The default deployment: the plugins it enables, with their options. PLUGINS in the environment
 * narrows this list without a code change (start-up names any plugin a narrowed list still needs).
 */
export default defineService({
  plugins: [
    attributes(),
    webhooks(),
    persons(),
    tokens(),
    password(),
    factors(),
    passkeys(),
    emailCodes(),
    sso(),
    ssoSignIn(),
    oauth2(),
    oauth2Authorize(),
    roles(),
    consents(),
    totp(),
    sdk(),
    edge(),
  ],
});
