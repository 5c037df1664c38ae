import { startAuthorizeService } from './fixture.ts';
import { resetRevocationSuite } from './reset-revocation.suite.ts';

resetRevocationSuite('a password reset and the OAuth grants on PGlite', (env) =>
  startAuthorizeService({ env }),
);
