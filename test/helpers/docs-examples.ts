/**
 * Runs the shell examples of the guides (docs/guides/*.md) and the README as a reader would type them,
 * against the real entry. The conventions the examples follow, which docs/guides/README.md states for
 * readers:
 *
 * - `localhost:3000` is the server `npm start` runs (here: the real entry on a free port).
 * - `ORG=...; KEY=...   # the Service-OrgID and Service-API-Key the first start printed` and
 *   `PERSON=...   # the person_id it answered`: a value the reader copies by hand, from the first start's
 *   lines or from what the command before printed. Here it is read from there: a JSON member, an HTML
 *   input's value, a `name: value` line or header, or a URL's query or fragment parameter of that name.
 * - A comment after a command that begins with a status (`# 409: the handle is taken`) says the example
 *   shows that answer; any other curl must answer below 400.
 * - `npm start`, with settings before it or not, (re)starts the server on the same data directory.
 * - `<!-- not run: why -->` on the line before a fence leaves that block out (the test lists them all).
 *
 * Run as a script (`bun docs-examples.ts capture <name> <file>`), it prints the value a capture reads.
 */
import { readFileSync } from 'node:fs';

export interface ExampleBlock {
  file: string;
  /** 1-based line of the block's first line (after the fence). */
  line: number;
  text: string;
  /** The reason given by a `<!-- not run: ... -->` marker before the fence, if any. */
  notRun?: string;
}

/** Every ```sh block of a Markdown file, with where it starts. */
export function shellBlocks(file: string, text = readFileSync(file, 'utf8')): ExampleBlock[] {
  const lines = text.split('\n');
  const blocks: ExampleBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    // A block may be indented inside a list item: its lines lose that indentation.
    const fence = /^( *)```sh$/.exec(lines[i]!);
    if (!fence) continue;
    const indent = fence[1]!;
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end] !== `${indent}\`\`\``) end++;
    const marker = /^ *<!-- not run: (.+) -->$/.exec(lines[i - 1] ?? '');
    blocks.push({
      file,
      line: start + 1,
      text: lines
        .slice(start, end)
        .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
        .join('\n'),
      ...(marker ? { notRun: marker[1] } : {}),
    });
    i = end;
  }
  return blocks;
}

export interface Statement {
  /** The code, comments removed, as bash reads it (continuation lines and here-documents included). */
  code: string;
  /** The comment on the statement's last line, without `#`. */
  comment: string;
  /** 1-based line in the Markdown file where it begins. */
  line: number;
}

/**
 * Splits a block into top-level statements: a newline ends one unless it is inside quotes, `$(...)`, a
 * here-document or after a backslash. Enough shell for examples; not a parser for every script.
 */
export function statements(block: ExampleBlock): Statement[] {
  const out: Statement[] = [];
  const lines = block.text.split('\n');
  let code = '';
  let comment = '';
  let first = -1;
  const stack: Array<'"' | "'" | ')'> = [];
  let heredoc: string | undefined;
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n]!;
    if (first < 0) first = n;
    if (heredoc !== undefined) {
      code += `${line}\n`;
      if (line.trim() === heredoc) {
        heredoc = undefined;
        out.push({ code: code.trimEnd(), comment, line: block.line + first });
        code = '';
        comment = '';
        first = -1;
      }
      continue;
    }
    let kept = '';
    let continued = false;
    for (let i = 0; i < line.length; i++) {
      const c = line[i]!;
      const top = stack.at(-1);
      if (top === "'") {
        kept += c;
        if (c === "'") stack.pop();
        continue;
      }
      if (c === '\\') {
        if (i === line.length - 1) {
          continued = true;
          kept += c;
          break;
        }
        kept += c + (line[i + 1] ?? '');
        i++;
        continue;
      }
      if (top === '"') {
        kept += c;
        if (c === '"') stack.pop();
        else if (c === '$' && line[i + 1] === '(') {
          stack.push(')');
          kept += '(';
          i++;
        }
        continue;
      }
      // At the top level or inside $(...).
      if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) {
        comment = line.slice(i + 1).trim();
        break;
      }
      kept += c;
      if (c === "'") stack.push("'");
      else if (c === '"') stack.push('"');
      else if (c === '$' && line[i + 1] === '(') {
        stack.push(')');
        kept += '(';
        i++;
      } else if (c === '(' && top === ')') stack.push(')');
      else if (c === ')' && top === ')') stack.pop();
    }
    code += `${kept}\n`;
    const doc = stack.length === 0 ? /<<-?\s*'?(\w+)'?/.exec(kept) : null;
    if (doc) {
      heredoc = doc[1]!;
      continue;
    }
    if (continued || stack.length > 0) continue;
    if (code.trim() === '') {
      // A comment line: it may say the status the statement before it shows.
      if (comment && out.length > 0 && !out.at(-1)!.comment) out.at(-1)!.comment = comment;
      code = '';
      comment = '';
      first = -1;
      continue;
    }
    out.push({ code: code.trimEnd(), comment, line: block.line + first });
    code = '';
    comment = '';
    first = -1;
  }
  if (code.trim() !== '' || stack.length > 0 || heredoc !== undefined)
    throw new Error(`${block.file}:${block.line}: the block ends inside a statement`);
  return out;
}

/** `VAR=...` (several on one line, `;` between): values the reader copies by hand. */
const CAPTURE = /^\s*[A-Z_][A-Z0-9_]*=\.\.\.(?:;\s*[A-Z_][A-Z0-9_]*=\.\.\.)*;?\s*$/;
const NPM_START = /^(?:[A-Z_][A-Z0-9_]*=\S+\s+)*npm start\s*$/;

/** What a capture line's comment names: `the a, b and c <where>`. */
export function captureNames(comment: string): { names: string[]; source: 'start' | 'output' } {
  const m = /^the ([\w.-]+(?:(?:, | and )[\w.-]+)*) (.+)$/.exec(comment);
  if (!m) throw new Error(`a capture's comment must read "the <name> it answered": ${comment}`);
  return { names: m[1]!.split(/, | and /), source: /first start/.test(m[2]!) ? 'start' : 'output' };
}

/** Reads the value a capture names from what a command printed (see the conventions above). */
export function capture(text: string, name: string): string | undefined {
  const n = name.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
  const patterns = [
    new RegExp(`"${n}"\\s*:\\s*"((?:[^"\\\\]|\\\\.)*)"`),
    new RegExp(`"${n}"\\s*:\\s*(-?\\d[\\d.eE+-]*|true|false)`),
    new RegExp(`name="${n}"[^>]*value="([^"]*)"`),
    new RegExp(`^\\s*${n}:\\s*(\\S+)\\s*$`, 'im'),
    new RegExp(`[?&#]${n}=([^&#\\s"'<]*)`),
  ];
  for (const p of patterns) {
    const m = p.exec(text);
    if (m) return p === patterns[4] ? decodeURIComponent(m[1]!) : m[1]!;
  }
  return undefined;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The status a statement's comment says it shows (`# 409: ...`), if any. */
export const expectedStatus = (comment: string): number | undefined => {
  const m = /^([1-5]\d\d)\b/.exec(comment);
  return m ? Number(m[1]) : undefined;
};

/** The bash script that runs the blocks in order, each statement marked with its place in the docs. */
export function script(blocks: ExampleBlock[], port: number): string {
  const parts: string[] = [];
  for (const block of blocks) {
    for (const s of statements(block)) {
      const where = `${block.file}:${s.line}`;
      const code = s.code.replaceAll('localhost:3000', `localhost:${port}`);
      parts.push(`__at ${quote(where)}`);
      if (CAPTURE.test(code)) {
        const vars = code
          .split(';')
          .map((a) => a.trim().replace(/=\.\.\.$/, ''))
          .filter(Boolean);
        const { names, source } = captureNames(s.comment);
        if (names.length !== vars.length)
          throw new Error(`${where}: ${vars.length} variables, but the comment names ${names.length}`);
        for (const [i, v] of vars.entries()) parts.push(`${v}=$(__capture ${quote(names[i]!)} ${source})`);
        continue;
      }
      if (NPM_START.test(code) || /&\s*$/.test(code)) {
        parts.push(code);
        continue;
      }
      const status = expectedStatus(s.comment);
      parts.push(`__expect ${status ?? ''}`, `{ ${code}\n} > "$__out"; cat "$__out"`);
    }
  }
  return parts.join('\n');
}

/** The shell around the examples: the server, curl checked, captures, and clean-up. */
export function preamble(o: {
  root: string;
  bun: string;
  helper: string;
  dir: string;
  port: number;
}): string {
  // set -m: each background job (a receiver an example starts) in a process group of its own, ended whole.
  return `set -eo pipefail
set -m
__root=${quote(o.root)}; __bun=${quote(o.bun)}; __helper=${quote(o.helper)}; __dir=${quote(o.dir)}
__out="$__dir/.out"; __where=''; __server=''
export PORT=${o.port} HOST=127.0.0.1 DATA_DIR="$__dir/data" MASTER_KEY='' DATABASE_URL='' NATS_URL=''
export NODE_ENV=development LOG_LEVEL=warn SERVICE_CONFIG=''
__at() { __where="$1"; }
__fail() { echo "FAILED at $__where: $*" >&2; return 1; }
__expect() { printf '%s' "$1" > "$__dir/.expect"; }
__stop() {
  for job in $(jobs -p); do kill -- "-$job" 2>/dev/null || kill "$job" 2>/dev/null || true; done
  if [ -n "$__server" ]; then kill "$__server" 2>/dev/null || true; wait "$__server" 2>/dev/null || true; fi
}
trap __stop EXIT
trap 'echo "FAILED at $__where (exit $?)" >&2' ERR
__start() {
  if [ -n "$__server" ]; then kill "$__server"; wait "$__server" 2>/dev/null || true; fi
  (cd "$__root" && exec "$__bun" entry/bun.ts) >> "$__dir/server.out" 2>> "$__dir/server.err" &
  __server=$!
  for _ in $(seq 1 600); do
    if command curl -sf -o /dev/null "http://127.0.0.1:$PORT/readyz"; then return 0; fi
    kill -0 "$__server" 2>/dev/null || break
    sleep 0.1
  done
  cat "$__dir/server.err" >&2
  __fail "the server did not start"
}
npm() { if [ "$*" = start ]; then __start; else __fail "the examples run npm start only, not npm $*"; fi; }
npx() { if [ "$1" = bun ]; then shift; "$__bun" "$@"; else __fail "the examples run npx bun only"; fi; }
curl() {
  local code expect
  code=$(command curl -sS -o "$__dir/.body" -w '%{http_code}' "$@") || __fail "curl $*"
  expect=$(cat "$__dir/.expect" 2>/dev/null || true); rm -f "$__dir/.expect"
  cat "$__dir/.body"
  if [ -s "$__dir/.body" ] && [ -n "$(tail -c 1 "$__dir/.body")" ]; then echo; fi
  if [ -n "$expect" ]; then
    [ "$code" = "$expect" ] || __fail "expected $expect, got $code: $(head -c 600 "$__dir/.body")"
  elif [ "$code" -ge 400 ]; then
    __fail "got $code (an example that shows an error says its status in a comment): $(head -c 600 "$__dir/.body")"
  fi
}
__capture() {
  local from="$__out"
  if [ "$2" = start ]; then from="$__dir/first-start.txt"; fi
  "$__bun" "$__helper" capture "$1" "$from" || __fail "no $1 in what it printed: $(head -c 600 "$from")"
}
cd "$__dir"
__start
`;
}

if (import.meta.main) {
  const [command, name, file] = process.argv.slice(2);
  if (command !== 'capture' || !name || !file)
    throw new Error('usage: docs-examples.ts capture <name> <file>');
  const value = capture(readFileSync(file, 'utf8'), name);
  if (value === undefined) process.exit(1);
  console.log(value);
}
