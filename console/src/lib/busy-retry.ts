// A busy server's refusal is waited out, as client-go does: a 429 was not acted on (any method may be sent again), a
// 503 is retried for reads only. A page whose first calls meet a loaded server then shows, instead of failing.
// A request the network dropped (fetch rejects with a TypeError: the browser's network changed, a connection closed)
// is sent again when sending it twice does no harm: reads, and calls marked so (the session's reviews).

const MAX_BUSY_RETRIES = 10;
const MAX_RETRY_AFTER_S = 30;
const MAX_NETWORK_RETRIES = 5;

export interface RetryingInit extends RequestInit {
  method: string;
  /** Sent again after a network failure even though not a GET: the call changes nothing on the server. */
  repeatable?: boolean;
}

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
    const abort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", abort, { once: true });
  });
}

/** Whether a failed fetch is sent again: a network failure of a call that may be repeated, not yet too often. */
function droppedAndRepeatable(error: unknown, init: RetryingInit, failures: number): boolean {
  if (!(error instanceof TypeError) || init.signal?.aborted || failures >= MAX_NETWORK_RETRIES) return false;
  return init.method === "GET" || init.repeatable === true;
}

/**
 * fetch(), sent again while the server answers it is too busy (at most 10 times, as its Retry-After asks), and after
 * a network failure where repeating it does no harm (at most 5 times, waiting 0.5 s doubling).
 */
export async function fetchWaitingOutBusy(url: string, init: RetryingInit): Promise<Response> {
  let networkFailures = 0;
  for (let attempt = 0; ; attempt++) {
    let response: Response;
    try {
      response = await fetch(url, init);
    } catch (error) {
      if (!droppedAndRepeatable(error, init, networkFailures)) throw error;
      await pause(500 * 2 ** networkFailures++, init.signal);
      continue;
    }
    if (!waitedOut(response, init.method, attempt)) return response;
    await response.body?.cancel();
    await pause(retryAfterMs(response), init.signal);
  }
}
