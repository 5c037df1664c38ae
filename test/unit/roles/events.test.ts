import { consents } from '../../../plugins/consents/index.ts';
import { roles } from '../../../plugins/roles/index.ts';
import { startIdentityService } from '../../helpers/identity-service.ts';
import { roleEventsSuite, SUITE_REGION } from './events.suite.ts';

roleEventsSuite('role, permission and consent events on PGlite with pg-queue', () =>
  startIdentityService({ plugins: [roles(), consents()], env: { REGION: SUITE_REGION } }),
);
