import { definePlugin } from '../../core/plugin.ts';
import { EDGE_INGEST, edgeRoutes } from './routes.ts';

export { EDGE_INGEST };

/**
 * The ingest for trusted components (a customer's gateway, the edge function that checks where tokens
 * are used): POST /edge/events with the organization's API key, taking the Gate events and
 * MitmAttackDetected_v1, checked against the catalogue and published like any other event.
 *
 * @example defineService({ plugins: [webhooks(), edge()] })
 */
export const edge = () =>
  definePlugin({
    id: 'edge',
    emits: [...EDGE_INGEST.accepts],
    setup: (ctx) => ({ routes: edgeRoutes(ctx) }),
  });
