// Serializes read-modify-write cycles per storage key inside this process. Concurrent patches of one object then
// queue instead of losing compare-and-swap races and retrying (which costs O(n²) work for n writers); the store's
// retry loop remains for writers in other processes of a shared backend.

export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}
