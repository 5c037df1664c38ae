import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ExampleBlock, preamble, script, shellBlocks, statements } from '../helpers/docs-examples.ts';
import { freePort } from '../helpers/real-entry.ts';

const ROOT = join(import.meta.dir, '..', '..');
const HELPER = join(ROOT, 'test/helpers/docs-examples.ts');
const GUIDES = readdirSync(join(ROOT, 'docs/guides'))
  .filter((f) => f.endsWith('.md') && f !== 'README.md')
  .sort()
  .map((f) => `docs/guides/${f}`);

/** Blocks left out, each with the reason its marker gives. Adding one here is a decision, not a fix. */
const NOT_RUN: Array<[file: string, reason: string]> = [
  [
    'docs/guides/resource-server.md',
    'it starts a second server (the unit test runs the example against the service)',
  ],
  ['docs/guides/sso-sign-in.md', 'it reaches the provider, accounts.google.com'],
];

/** A block runs when it calls curl or (re)starts the server with `npm start`. */
const runs = (b: ExampleBlock) =>
  b.notRun === undefined && (/\bcurl\b/.test(b.text) || /^(?:[A-Z_]+=\S+\s+)*npm start\b/m.test(b.text));
const blocksOf = (file: string) => shellBlocks(join(ROOT, file)).map((b) => ({ ...b, file }));

/** The README's first sign-in: every guide continues from it, as its reader does. */
const readme = blocksOf('README.md').filter(runs);
const prelude = readme.filter((b) => b.text.includes('ORG=...'));

/** `DOCS_EXAMPLES=persons bun test test/unit/docs-examples.test.ts` runs the files whose path holds it. */
const ONLY = process.env.DOCS_EXAMPLES;
const chosen = (file: string) => !ONLY || file.includes(ONLY);

let template = '';
const runsOf = new Map<string, Promise<{ code: number; output: string }>>();

/** The first start, once: its data directory is copied for each guide (a first start takes seconds). */
async function firstStart(dir: string) {
  const server = Bun.spawn([process.execPath, join(ROOT, 'entry/bun.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(freePort()),
      HOST: '127.0.0.1',
      DATA_DIR: join(dir, 'data'),
      MASTER_KEY: '',
      DATABASE_URL: '',
      NATS_URL: '',
      SERVICE_CONFIG: '',
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
    },
    stdout: 'ignore',
    stderr: 'pipe',
  });
  let err = '';
  const reader = server.stderr.getReader();
  while (!/API-Key: \S+\n/.test(err)) {
    const { value, done } = await reader.read();
    if (done) break;
    err += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  server.kill('SIGTERM');
  await server.exited;
  if (!/API-Key: \S+/.test(err)) throw new Error(`no development organization:\n${err}`);
  writeFileSync(join(dir, 'first-start.txt'), err);
}

async function run(file: string, blocks: ExampleBlock[]) {
  const dir = mkdtempSync(join(tmpdir(), 'ids-docs-'));
  try {
    cpSync(join(template, 'data'), join(dir, 'data'), { recursive: true });
    cpSync(join(template, 'first-start.txt'), join(dir, 'first-start.txt'));
    const port = freePort();
    const text = `${preamble({ root: ROOT, bun: process.execPath, helper: HELPER, dir, port })}\n${script(blocks, port)}\n`;
    writeFileSync(join(dir, 'examples.sh'), text);
    const proc = Bun.spawn(['bash', join(dir, 'examples.sh')], { cwd: dir, stdout: 'pipe', stderr: 'pipe' });
    const [out, err, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    const server = code === 0 ? '' : readFileSync(join(dir, 'server.err'), 'utf8').slice(-3000);
    return {
      code,
      output: `${out.slice(-3000)}\n--- stderr (${file})\n${err.slice(-4000)}\n--- the server's standard error\n${server}`,
    };
  } finally {
    // DOCS_EXAMPLES_KEEP=1 keeps each run's directory (examples.sh, server.err) to look into.
    if (!process.env.DOCS_EXAMPLES_KEEP) rmSync(dir, { recursive: true, force: true });
  }
}

describe('the shell examples of the README and the guides', () => {
  beforeAll(async () => {
    template = mkdtempSync(join(tmpdir(), 'ids-docs-template-'));
    await firstStart(template);
    const queue: Array<[string, ExampleBlock[]]> = [['README.md', readme]];
    for (const f of GUIDES) queue.push([f, [...prelude, ...blocksOf(f).filter(runs)]]);
    // Two at a time, each with a server of its own: more do not finish sooner on two cores.
    const slots: Array<Promise<unknown>> = [Promise.resolve(), Promise.resolve()];
    for (const [i, [file, blocks]] of queue.filter(([file]) => chosen(file)).entries()) {
      const result = slots[i % slots.length]!.then(() => run(file, blocks));
      slots[i % slots.length] = result.catch(() => undefined);
      runsOf.set(file, result);
    }
  }, 90_000);

  afterAll(() => {
    if (template) rmSync(template, { recursive: true, force: true });
  });

  it('finds the first sign-in in the README, and examples in every guide', () => {
    expect(prelude).toHaveLength(1);
    expect(GUIDES.length).toBeGreaterThan(10);
    for (const f of GUIDES) expect(blocksOf(f).filter(runs).length, f).toBeGreaterThan(0);
  });

  it('leaves out only the blocks listed, each with its reason', () => {
    const marked = ['README.md', ...GUIDES].flatMap((f) =>
      blocksOf(f)
        .filter((b) => b.notRun !== undefined)
        .map((b): [string, string] => [f, b.notRun!]),
    );
    expect(marked).toEqual(NOT_RUN);
  });

  it('reads every block as whole statements', () => {
    for (const f of ['README.md', ...GUIDES]) for (const b of blocksOf(f).filter(runs)) statements(b);
  });

  for (const file of ['README.md', ...GUIDES]) {
    it.skipIf(!chosen(file))(
      `${file}: every example answers as it says`,
      async () => {
        const { code, output } = await runsOf.get(file)!;
        expect(code, output).toBe(0);
      },
      300_000,
    );
  }
});
