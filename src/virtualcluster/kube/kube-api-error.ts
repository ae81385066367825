/** The Status a Kubernetes API server answers a failed request with (the fields callers read). */
export interface StatusBody {
  reason?: string;
  message?: string;
  code?: number;
}

/** An HTTP error answer of an API server: its code and, when it sent one, its Status. */
export class KubeApiError extends Error {
  readonly code: number;
  readonly status: StatusBody | undefined;

  constructor(code: number, status: StatusBody | undefined) {
    super(status?.message ? `HTTP ${code}: ${status.message}` : `HTTP ${code}`);
    this.name = "KubeApiError";
    this.code = code;
    this.status = status;
  }

  static fromResponse(code: number, text: string): KubeApiError {
    let status: StatusBody | undefined;
    try {
      const parsed = JSON.parse(text) as unknown;
      if (parsed && typeof parsed === "object") status = parsed as StatusBody;
    } catch {
      status = undefined;
    }
    return new KubeApiError(code, status);
  }
}
