import * as v from 'valibot';
import { exactObject } from '../../core/http/validation.ts';
import { isUuid } from '../../core/ids.ts';
import { ConsentErrors } from './errors.ts';

/** The GDPR consent levels, in the order lists are given in. `none`: the person refused every level. */
export const CONSENT_LEVELS = [
  'none',
  'necessary',
  'analytics',
  'marketing',
  'retargeting',
  'tracking',
] as const;
export type ConsentLevel = (typeof CONSENT_LEVELS)[number];

/** A level kept with when the person first gave it (RFC 3339). */
export interface GdprConsent {
  consent_level: ConsentLevel;
  created_at: string;
}

const rank = (level: string) => (CONSENT_LEVELS as readonly string[]).indexOf(level);

/** The levels without repeats, in CONSENT_LEVELS order. */
export const canonical = (levels: readonly ConsentLevel[]): ConsentLevel[] =>
  [...new Set(levels)].sort((a, b) => rank(a) - rank(b));

export const isConsentLevel = (s: string): s is ConsentLevel => rank(s) >= 0;

export const ConsentLevelsSchema = exactObject(
  {
    consent_levels: v.pipe(
      v.array(
        v.picklist(CONSENT_LEVELS, `must be one of ${CONSENT_LEVELS.join(', ')}`),
        'must be an array of consent levels',
      ),
      v.maxLength(100, 'must hold at most 100 levels'),
      v.check(
        (levels) => !levels.includes('none') || levels.every((l) => l === 'none'),
        'cannot give "none" (every level refused) together with another level',
      ),
      v.description(`The levels the person consents to, replacing those held: ${CONSENT_LEVELS.join(', ')}.`),
    ),
  },
  'member',
);

/** A person ID from the path: 400 when it cannot be one (so no query runs with it). */
export function parsePersonId(id: string): string {
  if (!isUuid(id))
    throw ConsentErrors.INVALID_CONSENT_INPUT(
      `path parameter person_id must be a UUID (got ${JSON.stringify(id)})`,
    );
  return id.toLowerCase();
}
