import { defineService } from 'identity-service/core';
import { attributes } from 'identity-service/plugins/attributes';
import { webhooks } from 'identity-service/plugins/webhooks';
import { planClaims } from './index.ts';

/**
 * A deployment with the built-in plugins and this one: `SERVICE_CONFIG=examples/plan-claims/service.config.ts npm start`.
 */
export default defineService({
  plugins: [attributes(), webhooks(), planClaims({ defaultPlan: 'free' })],
});
