import { defineService } from './core/plugin.ts';
import { attributes } from './plugins/attributes/index.ts';
import { tokens } from './plugins/tokens/index.ts';
import { webhooks } from './plugins/webhooks/index.ts';

/** Plugins registered but not yet enabled: tokens requires personDirectory (the persons plugin, at merge). */
export const pendingPlugins = [tokens()];

/**
 * The default deployment: the plugins it enables, with their options. PLUGINS in the environment
 * narrows this list without a code change.
 */
export default defineService({
  plugins: [attributes(), webhooks()],
});
