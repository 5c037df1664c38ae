import { defineService } from '../../../core/plugin.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { persons } from '../../../plugins/persons/index.ts';
import { startTestService } from '../../helpers/service.ts';

/** A service with the persons plugin alone (nothing else consumes the events topic). */
export const startPersonsService = (options: { storage?: Storage } = {}) =>
  startTestService({ definition: defineService({ plugins: [persons()] }), ...options });

export const email = (n: number | string) => ({ type: 'email_address', value: `p${n}@example.com` });
