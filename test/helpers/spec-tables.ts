import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// Reads the spec's Markdown the way a reviewer would: sections by heading, tables by rows, names in
// backticks. The catalogue tests compare the code against what this finds, so a change of the spec shows
// up as a failing test rather than as a silent drift.

const ROOT = join(import.meta.dir, '..', '..');
/** The copy committed in this repository (CI clones it without ../shared). */
export const SPEC_COPY = join(ROOT, 'docs', 'spec', 'identity-service-interface.md');
/** The source of truth, next to the repository in a working setup. */
export const SPEC_SOURCE = join(ROOT, '..', 'shared', 'spec', 'identity-service-interface.md');

export const readSpec = (): string => readFileSync(SPEC_COPY, 'utf8');
export const readSourceSpec = (): string | undefined =>
  existsSync(SPEC_SOURCE) ? readFileSync(SPEC_SOURCE, 'utf8') : undefined;

/** The text under a `###` (or `##`) heading, up to the next heading of that level or above. */
export function section(md: string, heading: string): string {
  const lines = md.split('\n');
  const start = lines.findIndex((l) => /^#{2,3} /.test(l) && l.replace(/^#+ /, '').trim() === heading);
  if (start < 0) throw new Error(`the spec has no section "${heading}"`);
  const level = lines[start]!.indexOf(' ');
  const rest = lines.slice(start + 1);
  const end = rest.findIndex((l) => {
    const m = /^(#+) /.exec(l);
    return m !== null && m[1]!.length <= level;
  });
  return (end < 0 ? rest : rest.slice(0, end)).join('\n');
}

export interface Table {
  header: string[];
  rows: string[][];
}

/** Every Markdown table in a text, without its separator row. */
export function tables(text: string): Table[] {
  const out: Table[] = [];
  let current: string[][] | undefined;
  for (const line of text.split('\n')) {
    if (line.trim().startsWith('|')) {
      const cells = line
        .trim()
        .slice(1, -1)
        .split('|')
        .map((c) => c.trim());
      if (cells.every((c) => /^:?-+:?$/.test(c))) continue;
      current ??= [];
      current.push(cells);
    } else if (current) {
      out.push({ header: current[0]!, rows: current.slice(1) });
      current = undefined;
    }
  }
  if (current) out.push({ header: current[0]!, rows: current.slice(1) });
  return out;
}

/** The names written in backticks, in order. */
export const backticked = (text: string): string[] => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

/** The text without its parenthesised parts (nested ones included). */
export function withoutParens(text: string): string {
  let out = '';
  let depth = 0;
  for (const ch of text) {
    if (ch === '(') depth++;
    else if (ch === ')') depth = Math.max(0, depth - 1);
    else if (depth === 0) out += ch;
  }
  return out;
}

/** Splits on a separator that is outside parentheses. */
function splitTopLevel(text: string, isCut: (text: string, i: number) => boolean): string[] {
  const parts: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')') depth--;
    else if (depth === 0 && isCut(text, i)) {
      parts.push(text.slice(from, i));
      from = i + 1;
    }
  }
  parts.push(text.slice(from));
  return parts;
}

/** `Name`=3 pairs of an enum's description, as a name -> number map. */
export const enumValues = (text: string): Record<string, number> =>
  Object.fromEntries([...text.matchAll(/`([^`]+)`=(\d+)/g)].map((m) => [m[1]!, Number(m[2])]));

export interface SpecMember {
  name: string;
  optional: boolean;
}

// Wording by which the spec says a member may be absent.
const OPTIONAL = /\boptional\b|\bonly if\b|\babsent for\b|\bwhen from\b/i;

/**
 * The top-level members a "Members" cell lists, with whether each may be absent. The cell's prose
 * (`Emitted when ...`, `Each plugin: ...`) starts at the first sentence end outside parentheses and is
 * not part of the list. A parenthesis qualifies the names of its item (`a` and `b` and `c` (...)); one
 * that says "both" also qualifies the item before.
 */
export function parseMembers(cell: string): SpecMember[] {
  const list = splitTopLevel(cell, (t, i) => t[i] === '.' && /^\.\s+[A-Z]/.test(t.slice(i, i + 3)))[0]!;
  const items = splitTopLevel(list, (t, i) => t[i] === ',').map((item) => ({
    names: backticked(withoutParens(item)),
    qualifier: item.match(/\(([\s\S]*)\)/)?.[1] ?? '',
    prefix: withoutParens(item),
  }));
  // "optional `x`" inside a parenthesis is about a nested member (`version` (object: optional `x`)).
  const optional = items.map(
    (it) => OPTIONAL.test(it.qualifier.replace(/optional\s+`[^`]+`/g, '')) || /\boptional\b/.test(it.prefix),
  );
  items.forEach((it, i) => {
    if (i > 0 && /\bboth\b/.test(it.qualifier) && optional[i]) optional[i - 1] = true;
  });
  return items.flatMap((it, i) => it.names.map((name) => ({ name, optional: optional[i]! })));
}

/** The members listed after a marker such as `Each plugin:`, up to the end of the cell. */
export const membersAfter = (cell: string, marker: string): SpecMember[] => {
  const at = cell.indexOf(marker);
  if (at < 0) throw new Error(`no "${marker}" in ${cell}`);
  return parseMembers(cell.slice(at + marker.length));
};

/** The content of the first parenthesis that follows a backticked name. */
export const parenthesisAfter = (cell: string, name: string): string => {
  const at = cell.indexOf(`\`${name}\` (`);
  if (at < 0) throw new Error(`no \`${name}\` (...) in ${cell}`);
  let depth = 0;
  const start = cell.indexOf('(', at);
  for (let i = start; i < cell.length; i++) {
    if (cell[i] === '(') depth++;
    else if (cell[i] === ')' && --depth === 0) return cell.slice(start + 1, i);
  }
  throw new Error(`unbalanced parenthesis after ${name}`);
};
