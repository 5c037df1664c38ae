/**
 * The end of one HTTP/1.1 answer in the bytes a connection received, for the load generator: its
 * status, how many bytes it took (head and body, by Content-Length or chunked), and whether the server
 * closes the connection after it. Undefined while the answer has not come whole.
 */
export interface Answer {
  status: number;
  length: number;
  close: boolean;
}

const HEAD_END = Buffer.from('\r\n\r\n');
const LINE_END = Buffer.from('\r\n');

export function answerOf(bytes: Buffer): Answer | undefined {
  const headEnd = bytes.indexOf(HEAD_END);
  if (headEnd < 0) return undefined;
  const head = bytes.toString('latin1', 0, headEnd);
  // "HTTP/1.1 200 OK": the status is the second word of the first line.
  const status = Number(head.slice(9, 12));
  if (!Number.isInteger(status)) throw new Error(`not an HTTP answer: ${head.slice(0, 80)}`);
  const lower = head.toLowerCase();
  const close = /\r\nconnection:\s*close/.test(lower);
  const bodyStart = headEnd + HEAD_END.length;
  const length = /\r\ncontent-length:\s*(\d+)/.exec(lower);
  if (length) {
    const total = bodyStart + Number(length[1]);
    return bytes.length >= total ? { status, length: total, close } : undefined;
  }
  if (/\r\ntransfer-encoding:[^\r]*chunked/.test(lower)) {
    const end = chunkedEnd(bytes, bodyStart);
    return end === undefined ? undefined : { status, length: end, close };
  }
  // No length and not chunked: a body-less status, or a body that ends when the connection does.
  return status === 204 || status === 304 || (status >= 100 && status < 200)
    ? { status, length: bodyStart, close }
    : { status, length: bytes.length, close: true };
}

/** Where a chunked body that starts at `from` ends (its last chunk, no trailers), once it has come. */
function chunkedEnd(bytes: Buffer, from: number): number | undefined {
  let at = from;
  for (;;) {
    const lineEnd = bytes.indexOf(LINE_END, at);
    if (lineEnd < 0) return undefined;
    const size = Number.parseInt(bytes.toString('latin1', at, lineEnd), 16);
    if (Number.isNaN(size)) throw new Error('a chunk size that is not hexadecimal');
    // The chunk's data and its CRLF; the last chunk (size 0) is followed by the empty trailer line.
    at = lineEnd + 2 + size + 2;
    if (at > bytes.length) return undefined;
    if (size === 0) return at;
  }
}
