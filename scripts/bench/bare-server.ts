/** The bound for the HTTP benchmark: a bare Bun.serve answering a small JSON body. */
const server = Bun.serve({
  port: Number(process.env.PORT ?? 0),
  hostname: '127.0.0.1',
  fetch: () => Response.json({ result: { ok: true } }),
});
console.log(JSON.stringify({ msg: 'listening', port: server.port }));
