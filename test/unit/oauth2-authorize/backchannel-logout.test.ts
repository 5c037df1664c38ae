import { backchannelLogoutSuite, startBackchannelService } from './backchannel-logout.suite.ts';

backchannelLogoutSuite('pg-queue on PGlite', (env) => startBackchannelService({ env }));
