/**
 * Preloaded (`bun --preload`) into the server processes a benchmark starts, which hold an IPC channel to
 * their parent for this alone: when the parent goes (the benchmark, or for a worker its supervisor), the
 * channel closes and the process exits, so no server outlives a benchmark that was killed.
 */
process.on('disconnect', () => process.exit(1));
