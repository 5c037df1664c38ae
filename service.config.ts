import { defineService } from './core/plugin.ts';
import { attributes } from './plugins/attributes/index.ts';
import { webhooks } from './plugins/webhooks/index.ts';

/**
 * The default deployment: the plugins it enables, with their options. PLUGINS in the environment
 * narrows this list without a code change.
 */
export default defineService({
  // password() (plugins/password) requires personDirectory and tokenIssuer: enabled at merge, with
  // persons() and tokens(), which provide them.
  plugins: [attributes(), webhooks()],
});
