/**
 * Runs the tasks given under one key one after another, in the order they were given, and tasks of
 * different keys side by side. In this process only: a task's failure does not stop the next one.
 */
export class KeyedSerializer {
  private readonly tails = new Map<string, Promise<void>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) {
        this.tails.delete(key);
      }
    });
    return result;
  }

  /** Keys with a task running or waiting (for tests: the map forgets idle keys). */
  get busyKeys(): number {
    return this.tails.size;
  }
}
