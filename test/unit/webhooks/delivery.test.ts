import { scaledClock } from '../../../adapters/clock/system.ts';
import { startWebhookService } from '../../helpers/webhooks.ts';
import { deliverySuite, RATE } from './delivery.suite.ts';

deliverySuite('pg-queue on PGlite', () => startWebhookService({ clock: scaledClock(RATE) }));
