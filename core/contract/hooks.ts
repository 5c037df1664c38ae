/**
 * Hooks: named extension points. The plugin that calls a point declares it; other plugins attach
 * handlers with a matcher, and the caller gets their results in order. Points shared across plugins
 * (such as `beforeTokenIssued`) are declared in core so both sides import the same typed value.
 */

/** The per-service registry handlers are attached in; opaque to plugins. */
export interface HookRegistry {
  readonly kind: 'hook-registry';
}

/** One handler of a hook point. */
export interface HookHandler<Input, Result> {
  /** The handler runs only for inputs it matches. @default every input */
  match?(input: Input): boolean;
  run(input: Input): Result | Promise<Result>;
  /** Handlers run in ascending order; equal orders keep the order plugins are listed in. @default 0 */
  order?: number;
}

/** A handler bound to its point: what a plugin returns in `attach`. */
export interface HookAttachment {
  readonly hook: string;
  readonly plugin?: string;
  install(registry: HookRegistry, plugin: string): void;
}

/** A named, typed extension point. */
export interface HookPoint<Input, Result> {
  readonly name: string;
  /** Binds a handler; a plugin returns this in `attach`. */
  attach(handler: HookHandler<Input, Result>): HookAttachment;
  /**
   * Runs the matching handlers one after another, in order, and returns their results in that order.
   * A handler that throws stops the run and the error reaches the caller (a blocked issuance, say).
   */
  run(registry: HookRegistry, input: Input): Promise<Result[]>;
  /** How many handlers are attached in this registry. */
  count(registry: HookRegistry): number;
}

interface Entry<Input, Result> {
  readonly handler: HookHandler<Input, Result>;
  readonly order: number;
  readonly seq: number;
  readonly plugin: string;
}

/**
 * Declares a hook point.
 *
 * @example
 * export const beforeInvoiceSent = defineHook<{ orgId: string; total: number }, { note?: string }>('beforeInvoiceSent');
 * // the caller:   const results = await ctx.hooks.run(beforeInvoiceSent, { orgId, total });
 * // an attacher:  attach: [beforeInvoiceSent.attach({ match: (i) => i.total > 100, run: () => ({ note: 'big' }) })]
 */
export function defineHook<Input, Result = void>(name: string): HookPoint<Input, Result> {
  const lists = new WeakMap<HookRegistry, Entry<Input, Result>[]>();
  let seq = 0;
  return {
    name,
    attach: (handler) => ({
      hook: name,
      install(registry, plugin) {
        const list = lists.get(registry) ?? [];
        list.push({ handler, order: handler.order ?? 0, seq: seq++, plugin });
        list.sort((a, b) => a.order - b.order || a.seq - b.seq);
        lists.set(registry, list);
      },
    }),
    async run(registry, input) {
      const results: Result[] = [];
      for (const { handler } of lists.get(registry) ?? []) {
        if (handler.match && !handler.match(input)) continue;
        results.push(await handler.run(input));
      }
      return results;
    },
    count: (registry) => lists.get(registry)?.length ?? 0,
  };
}

export const createHookRegistry = (): HookRegistry => ({ kind: 'hook-registry' });

/** Runs hook points in one service: what `ctx.hooks` is. */
export interface Hooks {
  run<Input, Result>(point: HookPoint<Input, Result>, input: Input): Promise<Result[]>;
  /** True when at least one handler is attached, so a caller can skip building an input nobody reads. */
  has(point: HookPoint<unknown, unknown>): boolean;
}

export const hooksOf = (registry: HookRegistry): Hooks => ({
  run: (point, input) => point.run(registry, input),
  has: (point) => point.count(registry) > 0,
});
