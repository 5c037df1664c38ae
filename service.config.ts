import { defineService } from './core/plugin.ts';
import { attributes } from './plugins/attributes/index.ts';
import { persons } from './plugins/persons/index.ts';
import { webhooks } from './plugins/webhooks/index.ts';

/**
 * The default deployment: the plugins it enables, with their options. PLUGINS in the environment
 * narrows this list without a code change.
 */
export default defineService({
  // password() (plugins/password) requires tokenIssuer too: enabled with tokens(), which provides it.
  plugins: [attributes(), webhooks(), persons()],
});
