// A busy server's refusal is waited out, as client-go does: a 429 was not acted on (any method may be sent again), a
// 503 is retried for reads only. A page whose first calls meet a loaded server then shows, instead of failing.

const MAX_BUSY_RETRIES = 10;
const MAX_RETRY_AFTER_S = 30;

function waitedOut(response: Response, method: string, attempt: number): boolean {
  if (attempt >= MAX_BUSY_RETRIES) return false;
  return response.status === 429 || (response.status === 503 && method === "GET");
}

function retryAfterMs(response: Response): number {
  const seconds = Number(response.headers.get("Retry-After"));
  return (Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, MAX_RETRY_AFTER_S) : 1) * 1000;
}

function pause(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });
}

/** fetch(), sent again while the server answers it is too busy (at most 10 times, as its Retry-After asks). */
export async function fetchWaitingOutBusy(url: string, init: RequestInit & { method: string }): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(url, init);
    if (!waitedOut(response, init.method, attempt)) return response;
    await response.body?.cancel();
    await pause(retryAfterMs(response), init.signal);
  }
}
