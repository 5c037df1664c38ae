import { startAuthorizeService } from './fixture.ts';
import { refreshChainSuite } from './refresh-chain.suite.ts';

refreshChainSuite('one chain per grant after a reuse within the grace window, on PGlite', (clock) =>
  startAuthorizeService({ clock }),
);
