// Prometheus's HTTP query API: /api/v1/query (an instant vector at a time) and /api/v1/query_range (a matrix).

export interface VectorSample {
  metric: Record<string, string>;
  value: number;
}

export interface MatrixSeries {
  metric: Record<string, string>;
  /** [unix seconds, value] */
  values: [number, number][];
}

async function call(base: string, path: string, params: Record<string, string>): Promise<unknown> {
  const url = new URL(path, base.endsWith("/") ? base : `${base}/`);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  const response = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  const body = (await response.json().catch(() => undefined)) as
    | { status?: string; data?: { resultType?: string; result?: unknown }; error?: string }
    | undefined;
  if (!response.ok || body?.status !== "success") {
    throw new Error(`prometheus ${path}: ${body?.error ?? `answered ${response.status}`}`);
  }
  return body.data?.result;
}

export async function queryVector(base: string, query: string, time: Date): Promise<VectorSample[]> {
  const result = (await call(base, "api/v1/query", { query, time: String(time.getTime() / 1000) })) as {
    metric: Record<string, string>;
    value: [number, string];
  }[];
  return (result ?? []).map((item) => ({ metric: item.metric, value: Number(item.value[1]) }));
}

export async function queryMatrix(
  base: string,
  query: string,
  start: Date,
  end: Date,
  stepSeconds: number,
): Promise<MatrixSeries[]> {
  const result = (await call(base, "api/v1/query_range", {
    query,
    start: String(start.getTime() / 1000),
    end: String(end.getTime() / 1000),
    step: String(stepSeconds),
  })) as { metric: Record<string, string>; values: [number, string][] }[];
  return (result ?? []).map((item) => ({
    metric: item.metric,
    values: item.values.map(([t, v]) => [t, Number(v)] as [number, number]),
  }));
}
