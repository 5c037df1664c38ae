/** One sample line of the Prometheus text format: `name{label="value",...} value`. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A scrape, read: its samples and the `# TYPE` of each metric family. */
export interface Scrape {
  samples: Sample[];
  types: Map<string, string>;
  /** The value of the one sample named so whose labels include these; undefined when there is none. */
  value(name: string, labels?: Record<string, string>): number | undefined;
  /** Every sample named so whose labels include these. */
  all(name: string, labels?: Record<string, string>): Sample[];
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/gy;

const unescaped = (s: string) => s.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
const numberOf = (s: string) =>
  s === '+Inf' ? Number.POSITIVE_INFINITY : s === '-Inf' ? Number.NEGATIVE_INFINITY : Number(s);

/**
 * Parses the Prometheus text exposition format (0.0.4) strictly enough for tests: every line is a
 * comment, blank, or a sample whose labels and value parse; anything else throws, naming the line.
 */
export function parsePrometheus(text: string): Scrape {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
      if (type) types.set(type[1]!, type[2]!);
      else if (!line.startsWith('# HELP ')) throw new Error(`not a HELP or TYPE comment: ${line}`);
      continue;
    }
    const m = LINE.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    const body = m[2] ?? '';
    LABEL.lastIndex = 0;
    let read = 0;
    for (let l = LABEL.exec(body); l; l = LABEL.exec(body)) {
      labels[l[1]!] = unescaped(l[2]!);
      read = LABEL.lastIndex;
    }
    if (read !== body.length) throw new Error(`labels do not parse: ${line}`);
    const value = numberOf(m[3]!);
    if (Number.isNaN(value)) throw new Error(`not a number: ${line}`);
    samples.push({ name: m[1]!, labels, value });
  }
  const matches = (s: Sample, name: string, labels: Record<string, string>) =>
    s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v);
  const all = (name: string, labels: Record<string, string> = {}) =>
    samples.filter((s) => matches(s, name, labels));
  return {
    samples,
    types,
    all,
    value(name, labels = {}) {
      const found = all(name, labels);
      if (found.length > 1)
        throw new Error(
          `${found.length} samples of ${name} match ${JSON.stringify(labels)}; name every label`,
        );
      return found[0]?.value;
    },
  };
}
