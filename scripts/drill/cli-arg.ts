/** A drill's command-line option: the word after `--<name>`, else `fallback`. */
export function cliArg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}
