// A full garbage collection in the server under test, from outside: SIGUSR1 opens Node's inspector on
// 127.0.0.1:9229, then one DevTools-protocol session collects garbage and reads the V8 heap size. Used only after
// all measurements of a server (the inspector stays open until it exits). Returns undefined when not possible
// (port taken, no inspector), so callers report "n/a".

const PORT = 9229;

export interface HeapUsage {
  usedBytes: number;
  totalBytes: number;
}

async function targets(): Promise<{ webSocketDebuggerUrl: string }[]> {
  const res = await fetch(`http://127.0.0.1:${PORT}/json/list`, { signal: AbortSignal.timeout(1000) });
  return (await res.json()) as { webSocketDebuggerUrl: string }[];
}

function session(url: string): Promise<{ call(method: string, params?: object): Promise<unknown>; close(): void }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    const pending = new Map<number, (result: unknown) => void>();
    let next = 1;
    socket.addEventListener("message", (message) => {
      const data = JSON.parse(String(message.data)) as { id?: number; result?: unknown };
      if (data.id !== undefined) pending.get(data.id)?.(data.result);
    });
    socket.addEventListener("error", () => reject(new Error("inspector connection failed")));
    socket.addEventListener("open", () =>
      resolve({
        call(method, params = {}) {
          const id = next++;
          return new Promise((done) => {
            pending.set(id, done);
            socket.send(JSON.stringify({ id, method, params }));
          });
        },
        close: () => socket.close(),
      }),
    );
  });
}

/** Opens the inspector of `pid` and runs `use` with a session on it; undefined when not possible. */
async function withInspector<T>(
  pid: number,
  use: (s: { call(method: string, params?: object): Promise<unknown> }) => Promise<T>,
): Promise<T | undefined> {
  try {
    process.kill(pid, "SIGUSR1");
    let list: { webSocketDebuggerUrl: string }[] = [];
    for (let attempt = 0; attempt < 30 && list.length === 0; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      list = await targets().catch(() => []);
    }
    if (list.length !== 1) return undefined;
    const s = await session(list[0].webSocketDebuggerUrl);
    try {
      // The inspector on 9229 must be the server's, not some other process's.
      const evaluated = (await s.call("Runtime.evaluate", { expression: "process.pid" })) as {
        result?: { value?: number };
      };
      if (evaluated.result?.value !== pid) return undefined;
      return await use(s);
    } finally {
      s.close();
    }
  } catch {
    return undefined;
  }
}

export function collectGarbage(pid: number): Promise<HeapUsage | undefined> {
  return withInspector(pid, async (s) => {
    await s.call("HeapProfiler.collectGarbage");
    await s.call("HeapProfiler.collectGarbage");
    const usage = (await s.call("Runtime.getHeapUsage")) as { usedSize: number; totalSize: number };
    return { usedBytes: usage.usedSize, totalBytes: usage.totalSize };
  });
}

/** The value of one expression evaluated in the server (no GC first). */
export function inspectorEvaluate(pid: number, expression: string): Promise<unknown> {
  return withInspector(pid, async (s) => {
    const evaluated = (await s.call("Runtime.evaluate", { expression, returnByValue: true })) as {
      result?: { value?: unknown };
    };
    return evaluated.result?.value;
  });
}

/**
 * A CPU profile of the server while `during` runs (sampling every `intervalUs` µs), from its inspector. The profiler
 * starts at once, or when `during` calls the `start` it is given (to leave a set-up phase out).
 */
export async function profileDuring<T>(
  pid: number,
  during: (start: () => Promise<void>) => Promise<T>,
  intervalUs = 200,
): Promise<{ result: T; profile: unknown } | undefined> {
  return withInspector(pid, async (s) => {
    await s.call("Profiler.enable");
    await s.call("Profiler.setSamplingInterval", { interval: intervalUs });
    let started = false;
    const start = async () => {
      if (started) return;
      started = true;
      await s.call("Profiler.start");
    };
    const result = await during(start);
    await start();
    const stopped = (await s.call("Profiler.stop")) as { profile: unknown };
    return { result, profile: stopped.profile };
  });
}
