import { edge } from '../../../plugins/edge/index.ts';
import { sdk } from '../../../plugins/sdk/index.ts';
import { startIdentityService } from '../../helpers/identity-service.ts';
import { sdkIngestSuite } from './sdk-ingest.suite.ts';

sdkIngestSuite('the SDK ingest, logout and the edge ingest on PGlite with pg-queue', () =>
  startIdentityService({ plugins: [sdk(), edge()] }),
);
