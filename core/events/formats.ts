import * as v from 'valibot';
import { uuidString } from '../ids.ts';
import type { JsonValue } from '../ports/event-bus.ts';

// The scalar formats event payloads are made of. Protobuf scalars travel as JSON numbers here (the way
// `source` does), so the integer widths are checked as ranges of safe integers.

/** A string; the spec gives no further rule (descriptions, free text, vendor identifiers). */
export const text = () => v.string();

/** A non-empty string: identifiers and names whose empty value would mean nothing (person_id, region). */
export const identifier = () => v.pipe(v.string(), v.nonEmpty('must not be empty'));

/** A UUID, where the spec says `string (UUID)`. */
export const uuid = () => uuidString('must be a UUID');

/** An IPv4 or IPv6 address (no port, no brackets). */
export const ipAddress = () => v.pipe(v.string(), v.ip('must be an IPv4 or IPv6 address'));

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

const daysIn = (year: number, month: number) =>
  month === 2
    ? year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
      ? 29
      : 28
    : [4, 6, 9, 11].includes(month)
      ? 30
      : 31;

/**
 * True for an RFC 3339 date-time: `T`, seconds, up to nanoseconds, `Z` or a `±hh:mm` offset, and a date
 * that exists. Written out because `Date.parse` takes February 30th and valibot's `isoTimestamp` also
 * takes a space and `+hhmm`, which RFC 3339 does not.
 */
export function isRfc3339(s: string): boolean {
  const m = RFC3339.exec(s);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const offsetOk = m[7] === undefined || (Number(m[7]) <= 23 && Number(m[8]) <= 59);
  // Second 60 is a leap second, which RFC 3339 allows.
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysIn(year, month) &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 60 &&
    offsetOk
  );
}

/** An RFC 3339 timestamp string (protobuf `Timestamp` in JSON). */
export const timestamp = () =>
  v.pipe(
    v.string(),
    v.check(isRfc3339, 'must be an RFC 3339 timestamp such as 2026-01-02T03:04:05.123456789Z'),
  );

const integerIn = (lo: number, hi: number, what: string) =>
  v.pipe(
    v.number(),
    v.check((n) => Number.isInteger(n) && n >= lo && n <= hi, `must be an ${what} (integer ${lo}..${hi})`),
  );

/** A protobuf int32. */
export const int32 = () => integerIn(-2_147_483_648, 2_147_483_647, 'int32');
/** A protobuf int64, limited to the integers a JSON number carries exactly. */
export const int64 = () => integerIn(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, 'int64');
/** A protobuf uint64, limited to the integers a JSON number carries exactly. */
export const uint64 = () => integerIn(0, Number.MAX_SAFE_INTEGER, 'uint64');
/** A protobuf double: any finite number (JSON has no NaN or infinity). */
export const double = () => v.pipe(v.number(), v.finite('must be a finite number'));

/** A string holding a JSON document (an AWS policy document). */
export const jsonDocument = () =>
  v.pipe(
    v.string(),
    v.check((s) => {
      try {
        JSON.parse(s);
        return true;
      } catch {
        return false;
      }
    }, 'must be a JSON document'),
  );

/** Any JSON value (a Gate plugin's `plugin_metadata`). */
export const jsonValue: v.GenericSchema<JsonValue> = v.lazy(() =>
  v.union(
    [
      v.string(),
      v.pipe(v.number(), v.finite()),
      v.boolean(),
      v.null(),
      v.array(jsonValue),
      v.record(v.string(), jsonValue),
    ],
    'must be a JSON value',
  ),
);

/**
 * An object with exactly these members: an unknown member is refused, so a misspelt optional member
 * cannot pass unnoticed. The messages say which rule broke, since formatIssues already names the path.
 */
export const strict = <E extends v.ObjectEntries>(entries: E) =>
  v.strictObject(entries, (issue) =>
    issue.expected === 'never'
      ? 'unknown member'
      : issue.received === 'undefined'
        ? 'required'
        : `must be an object (got ${issue.received})`,
  );
