import { describe, expect, it } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/**
 * The public entry (core/index.ts) promises that a plugin kept outside this repository builds against it
 * alone. The built-in plugins and the examples are held to the same promise: every name they import from
 * core/ (values and types alike, whatever file they name) must be one the entry exports.
 */

const root = resolve(import.meta.dir, '../..');
const core = join(root, 'core');
const entry = join(core, 'index.ts');

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((d) => d.isFile() && d.name.endsWith('.ts') && !d.name.endsWith('.d.ts'))
    .map((d) => join(d.parentPath, d.name))
    .sort();

const parse = (file: string, text = readFileSync(file, 'utf8')) =>
  ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);

/** Whether a module specifier written in `file` names something under core/ (a path, or the package entry). */
const namesCore = (file: string, specifier: string) => {
  if (specifier === 'identity-service/core') return true;
  if (!specifier.startsWith('.')) return false;
  const target = resolve(dirname(file), specifier);
  return target === core || target.startsWith(`${core}/`);
};

/** The names core/index.ts exports (its own declarations and its re-exports). */
function entryExports(): Set<string> {
  const names = new Set<string>();
  for (const statement of parse(entry).statements) {
    if (ts.isExportDeclaration(statement)) {
      if (!statement.exportClause) throw new Error('core/index.ts: name what `export *` exports');
      if (ts.isNamedExports(statement.exportClause)) {
        for (const e of statement.exportClause.elements) names.add(e.name.text);
      } else names.add(statement.exportClause.name.text);
    } else if (ts.canHaveModifiers(statement)) {
      const exported = ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
      if (!exported) continue;
      if (ts.isVariableStatement(statement)) {
        for (const d of statement.declarationList.declarations) {
          if (ts.isIdentifier(d.name)) names.add(d.name.text);
        }
      } else if ('name' in statement && statement.name && ts.isIdentifier(statement.name as ts.Node)) {
        names.add((statement.name as ts.Identifier).text);
      }
    }
  }
  return names;
}

interface CoreImport {
  file: string;
  line: number;
  specifier: string;
  /** The imported names; `*` for a namespace import or `export *`, which the entry cannot vouch for. */
  names: string[];
}

/** Every import, re-export and `import('…')` type of a file that names a module under core/. */
function coreImports(file: string, text?: string): CoreImport[] {
  const source = parse(file, text);
  const found: CoreImport[] = [];
  const add = (node: ts.Node, specifier: string, names: string[]) => {
    if (!namesCore(file, specifier)) return;
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    found.push({ file: relative(root, file), line, specifier, names });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const names: string[] = [];
      if (clause?.name) names.push('default');
      const bindings = clause?.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) names.push('*');
      if (bindings && ts.isNamedImports(bindings)) {
        for (const e of bindings.elements) names.push((e.propertyName ?? e.name).text);
      }
      add(node, node.moduleSpecifier.text, names);
    } else if (
      ts.isExportDeclaration(node) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      const clause = node.exportClause;
      const names =
        clause && ts.isNamedExports(clause)
          ? clause.elements.map((e) => (e.propertyName ?? e.name).text)
          : ['*'];
      add(node, node.moduleSpecifier.text, names);
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      add(node, node.argument.literal.text, [node.qualifier ? leftmost(node.qualifier) : '*']);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const leftmost = (name: ts.EntityName): string => (ts.isIdentifier(name) ? name.text : leftmost(name.left));

const consumers = [...sourceFiles(join(root, 'plugins')), ...sourceFiles(join(root, 'examples'))];

describe('the public entry core/index.ts', () => {
  const exported = entryExports();

  it('exports every name a built-in plugin or an example imports from core/', () => {
    const missing: string[] = [];
    for (const file of consumers) {
      for (const i of coreImports(file)) {
        for (const name of i.names) {
          if (!exported.has(name)) missing.push(`${i.file}:${i.line} imports ${name} from ${i.specifier}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('finds the imports it checks (values, types and import types alike)', () => {
    const file = join(root, 'plugins/sample/routes.ts');
    const sample = [
      "import { a, b as c } from '../../core/x.ts';",
      "import type { T } from '../../core/y.ts';",
      "import { type U, v } from '../other.ts';",
      "export { w } from '../../core/z.ts';",
      "let x: import('../../core/q.ts').Q.R;",
    ].join('\n');
    const names = coreImports(file, sample).flatMap((i) => i.names);
    expect(names).toEqual(['a', 'b', 'T', 'w', 'Q']);
  });
});
