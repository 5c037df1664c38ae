/**
 * Capabilities: a plugin provides a named, typed service and another requires it. A capability is a
 * value both sides import (from core, or from the providing plugin's package), never a string lookup,
 * so the type travels with it and no cast is needed on either side.
 */

/** The per-service registry a capability's implementation is kept in; opaque to plugins. */
export interface CapabilityRegistry {
  readonly kind: 'capability-registry';
}

/** One implementation bound to its capability: what a plugin returns in `provide`. */
export interface Provision {
  readonly capability: string;
  install(registry: CapabilityRegistry): void;
}

/** A typed name for something one plugin offers others (a port-like interface, never its tables). */
export interface Capability<T> {
  /** Kebab or camel name, shown in start-up errors. */
  readonly name: string;
  /** Binds an implementation; the plugin that declares the capability in `provides` returns this. */
  provide(impl: T): Provision;
  /** The implementation in this registry, or undefined when no enabled plugin provides it. */
  from(registry: CapabilityRegistry): T | undefined;
}

/**
 * Declares a capability.
 *
 * @example
 * export interface AttributeStoreApi { read(orgId: string, bucket: string): Promise<Record<string, unknown>> }
 * export const attributeStore = defineCapability<AttributeStoreApi>('attributeStore');
 */
export function defineCapability<T>(name: string): Capability<T> {
  // The implementation lives beside the capability, keyed by registry: typed end to end, no casts.
  const slots = new WeakMap<CapabilityRegistry, T>();
  return {
    name,
    provide: (impl) => ({
      capability: name,
      install(registry) {
        if (slots.has(registry)) throw new Error(`capability ${name} is provided twice`);
        slots.set(registry, impl);
      },
    }),
    from: (registry) => slots.get(registry),
  };
}

export const createCapabilityRegistry = (): CapabilityRegistry => ({ kind: 'capability-registry' });

/** Named capabilities, as a plugin lists those it provides or requires. */
export type CapabilityMap = { readonly [key: string]: Capability<unknown> };

/** The implementations a capability map stands for: `{ store: AttributeStoreApi }`. */
export type Implementations<M extends CapabilityMap> = {
  [K in keyof M]: M[K] extends Capability<infer T> ? T : never;
};
