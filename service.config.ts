import { defineService } from './core/plugin.ts';

/**
 * The default deployment: the plugins it enables, with their options. PLUGINS in the environment
 * narrows this list without a code change.
 */
export default defineService({
  plugins: [],
});
