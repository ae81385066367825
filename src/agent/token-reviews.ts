// What only the platform knows about a direct cluster endpoint token that verified offline: whether the user's
// tokenGeneration was raised since, or the user disabled or deleted. The direct endpoint asks the platform
// (`selves` with the token, sent with the agent's own key: every key may ask who a credential is) at most once per
// token every REVIEW_CACHE_MS, so a revoked token stops working here within about that time while the platform
// answers. A known token is answered at once from its last review while a new one is asked in the background; only a
// token never seen waits for the platform. While the platform cannot be reached the offline verdict stands (and it is
// not asked again for UNREACHABLE_MS, so a platform that is down costs requests nothing): the direct endpoint keeps
// working without the platform — the reason it exists — and a token revoked meanwhile works until its own expiry.

import { hash } from "node:crypto";
import { request } from "node:https";

/** How long a review is trusted: the bound for a revoked token to stop working here. */
export const REVIEW_CACHE_MS = 4_000;
const TIMEOUT_MS = 3_000;
/** After a failed review the platform is not asked for this long. */
const UNREACHABLE_MS = 30_000;
const MAX_ENTRIES = 10_000;
const SELVES = "/kubernetes/management/apis/management.platform.sh/v1/selves";

export interface ReviewTarget {
  /** The platform's base URL (the one the agent is connected to), or undefined while it knows none. */
  url(): string | undefined;
  caPem?: string;
  insecure: boolean;
  accessKey: string;
}

/** The platform's answer for a credential (refusal: why it is refused), or undefined when it gave none. */
function review(target: ReviewTarget, base: string, token: string): Promise<{ refusal?: string } | undefined> {
  const body = JSON.stringify({
    apiVersion: "management.platform.sh/v1",
    kind: "Self",
    spec: { accessKey: token },
  });
  return new Promise((resolve) => {
    const req = request(
      new URL(SELVES, base),
      {
        method: "POST",
        ca: target.caPem,
        rejectUnauthorized: !target.insecure,
        headers: {
          authorization: `Bearer ${target.accessKey}`,
          "content-type": "application/json",
          accept: "application/json",
        },
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          if (text.length < 64 * 1024) text += chunk;
        });
        response.on("end", () => {
          // 2xx: the platform takes the token; 400: it does not (revoked, disabled, deleted: the message says
          // which). Anything else is about our own request (401: the agent's key itself) and says nothing.
          const status = response.statusCode ?? 0;
          if (status >= 200 && status < 300) return resolve({});
          if (status !== 400) return resolve(undefined);
          try {
            resolve({ refusal: (JSON.parse(text) as { message?: string }).message || "revoked" });
          } catch {
            resolve({ refusal: "revoked" });
          }
        });
      },
    );
    req.setTimeout(TIMEOUT_MS, () => req.destroy());
    req.on("error", () => resolve(undefined));
    req.end(body);
  });
}

/** The key a token is known by (never the token itself). */
export const tokenDigest = (token: string): string => hash("sha256", token, "base64url");

export class TokenReviews {
  readonly #target: ReviewTarget;
  readonly #now: () => number;
  readonly #cache = new Map<string, { until: number; refusal?: string }>();
  readonly #asking = new Map<string, Promise<string | undefined>>();
  #unreachableUntil = 0;

  constructor(target: ReviewTarget, now: () => number = Date.now) {
    this.#target = target;
    this.#now = now;
  }

  /**
   * Why the platform refuses this token, if it does; undefined when it accepts it or cannot be asked. `digest`: the
   * token's tokenDigest(), when the caller has it already.
   */
  async refusal(token: string, digest = tokenDigest(token)): Promise<string | undefined> {
    const cached = this.#cache.get(digest);
    if (cached && cached.until > this.#now()) return cached.refusal;
    const asking = this.#ask(digest, token);
    // Known: answer from the last review now, the new one lands meanwhile.
    return cached ? cached.refusal : asking;
  }

  #ask(digest: string, token: string): Promise<string | undefined> {
    const base = this.#target.url();
    if (!base || this.#now() < this.#unreachableUntil) return Promise.resolve(undefined);
    let asking = this.#asking.get(digest);
    if (!asking) {
      asking = review(this.#target, base, token).then((answer) => {
        this.#asking.delete(digest);
        if (!answer) {
          this.#unreachableUntil = this.#now() + UNREACHABLE_MS;
          return this.#cache.get(digest)?.refusal;
        }
        if (this.#cache.size >= MAX_ENTRIES) this.#cache.delete(this.#cache.keys().next().value as string);
        this.#cache.set(digest, { until: this.#now() + REVIEW_CACHE_MS, refusal: answer.refusal });
        return answer.refusal;
      });
      this.#asking.set(digest, asking);
    }
    return asking;
  }
}
