/** In-process wake-up signals per topic: a local publish wakes local consumers at once. */
export class Wakeups {
  private readonly waiters = new Map<string, Set<() => void>>();

  wake(topic: string): void {
    const set = this.waiters.get(topic);
    if (!set) return;
    this.waiters.delete(topic);
    for (const fn of set) fn();
  }

  /** Waits for the next wake of the topic, `ms`, or a call of the returned `cancel`, whichever is first. */
  wait(topic: string, ms: number): { done: Promise<void>; cancel: () => void } {
    let cancel = () => {};
    const done = new Promise<void>((resolve) => {
      const waiters = this.waiters.get(topic) ?? new Set<() => void>();
      this.waiters.set(topic, waiters);
      const finish = () => {
        clearTimeout(timer);
        waiters.delete(finish);
        resolve();
      };
      const timer = setTimeout(finish, Math.max(1, ms));
      waiters.add(finish);
      cancel = finish;
    });
    return { done, cancel };
  }
}
