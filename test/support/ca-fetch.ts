// A fetch for relying parties under test (openid-client's customFetch): node:https trusting only the CAs given,
// redirects never followed, the answer as a Fetch API Response.

import { request } from "node:https";

export type CaFetch = (url: string, options: RequestInit) => Promise<Response>;

function bodyOf(body: RequestInit["body"]): string | Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string") return body;
  if (body instanceof URLSearchParams) return body.toString();
  if (body instanceof Uint8Array) return Buffer.from(body);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  throw new Error("caFetch sends string, form or byte bodies only");
}

export function caFetch(ca: string[]): CaFetch {
  return (url, options) =>
    new Promise((resolve, reject) => {
      const headers = Object.fromEntries(new Headers(options.headers).entries());
      const req = request(url, { method: options.method ?? "GET", headers, ca, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const status = res.statusCode ?? 0;
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            for (const one of Array.isArray(value) ? value : [value]) {
              if (one !== undefined) responseHeaders.append(name, one);
            }
          }
          const empty = status === 204 || status === 304;
          const response = new Response(empty ? null : Buffer.concat(chunks), { status, headers: responseHeaders });
          Object.defineProperty(response, "url", { value: url });
          resolve(response);
        });
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end(bodyOf(options.body));
    });
}
