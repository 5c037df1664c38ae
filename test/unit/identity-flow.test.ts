import { startIdentityService } from '../helpers/identity-service.ts';
import { identityFlowSuite } from './identity-flow.suite.ts';

identityFlowSuite('the identity flow on PGlite with pg-queue', () => startIdentityService());
