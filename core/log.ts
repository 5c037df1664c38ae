import type { LogLevel } from './config.ts';

export type LogFields = Record<string, unknown>;

/** Structured JSON logs, one object a line, on standard output (errors on standard error). */
export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
  /** True when a message at this level would be written: skip building fields that would be dropped. */
  enabled(level: LogLevel): boolean;
  readonly level: LogLevel;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export type LogSink = (line: string, level: LogLevel) => void;

const defaultSink: LogSink = (line, level) => {
  if (level === 'error') console.error(line);
  else console.log(line);
};

function serializeError(e: unknown): unknown {
  if (e instanceof Error)
    return {
      name: e.name,
      message: e.message,
      stack: e.stack,
      cause: e.cause ? serializeError(e.cause) : undefined,
    };
  return e;
}

export function createLogger(level: LogLevel, base: LogFields = {}, sink: LogSink = defaultSink): Logger {
  const min = RANK[level];
  const write = (lvl: LogLevel, msg: string, fields?: LogFields) => {
    if (RANK[lvl] < min) return;
    const out: LogFields = { level: lvl, time: new Date().toISOString(), msg, ...base };
    if (fields)
      for (const [k, val] of Object.entries(fields)) out[k] = k === 'err' ? serializeError(val) : val;
    sink(JSON.stringify(out), lvl);
  };
  return {
    level,
    enabled: (lvl) => RANK[lvl] >= min,
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (fields) => createLogger(level, { ...base, ...fields }, sink),
  };
}
