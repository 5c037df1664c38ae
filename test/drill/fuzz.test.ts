import { expect, it } from 'bun:test';
import { fuzzDrill, fuzzVerdictLine } from '../../scripts/drill/fuzz.ts';

// The fuzz drill at a test's scale (npm run drill:fuzz sends 100,000): a different seed each run, printed.
it('answers fast-check requests on every route without a 5xx, each 4xx in the envelope', async () => {
  const seed = Date.now() % 1_000_000;
  const v = await fuzzDrill({ requests: 3000, seed });
  console.log(`seed ${seed}: ${fuzzVerdictLine(v)}`);
  expect(v.serverErrors).toEqual([]);
  expect(v.badEnvelopes).toEqual([]);
  // The OAuth and SSO routes with real clients, states and tokens: no open redirect, no unregistered error.
  expect(v.protocolFindings).toEqual([]);
  expect(v.protocolRequests).toBe(1000);
  expect(v.requests).toBe(3000);
  // Not all refused at the door: valid credentials reach the handlers.
  expect(v.byClass['2xx'] ?? 0).toBeGreaterThan(100);
}, 120_000);
