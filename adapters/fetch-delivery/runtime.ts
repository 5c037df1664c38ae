/** The JavaScript runtime this process runs on. */
export type Runtime = 'bun' | 'deno' | 'node';

/**
 * The one place the delivery adapter asks which runtime it is on. Bun and Deno both publish their
 * version next to Node's in `process.versions` (Deno 2 defines `process` globally), so no global sniffing
 * is needed.
 */
export function detectRuntime(): Runtime {
  const versions = typeof process === 'undefined' ? undefined : process.versions;
  if (versions?.bun) return 'bun';
  if (versions?.deno) return 'deno';
  return 'node';
}
