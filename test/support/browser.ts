// A minimal browser for login flows over real HTTPS: a cookie jar (tough-cookie), redirects followed by hand so
// every hop is visible, forms read from the page and submitted, trust limited to the CAs the test names.

import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { CookieJar } from "tough-cookie";

export interface Page {
  url: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** Every URL visited to get here, in order. */
  trail: string[];
}

export interface Form {
  action: string;
  method: string;
  fields: Record<string, string>;
}

const decode = (text: string) =>
  text
    .replace(/&#(\d+);/g, (_, code) => String.fromCharCode(Number(code)))
    .replace(/&quot;/g, '"')
    .replace(/&#x27;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");

function attribute(tag: string, name: string): string | undefined {
  const match = new RegExp(`\\s${name}\\s*=\\s*("([^"]*)"|'([^']*)')`, "i").exec(tag);
  return match ? decode(match[2] ?? match[3] ?? "") : undefined;
}

/** The forms of a page: action (absolute), method and the named inputs with their values. */
export function formsOf(page: Page): Form[] {
  const forms: Form[] = [];
  for (const match of page.body.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)) {
    const fields: Record<string, string> = {};
    for (const input of match[2].matchAll(/<(input|button)\b[^>]*>/gi)) {
      const name = attribute(input[0], "name");
      if (name && !(name in fields)) fields[name] = attribute(input[0], "value") ?? "";
    }
    forms.push({
      action: new URL(attribute(match[1], "action") || page.url, page.url).toString(),
      method: (attribute(match[1], "method") ?? "get").toUpperCase(),
      fields,
    });
  }
  return forms;
}

export class TestBrowser {
  readonly jar = new CookieJar();
  private readonly ca: string[];

  constructor(ca: string[]) {
    this.ca = ca;
  }

  /** One request, no redirects followed; cookies are sent and stored. */
  async fetch(
    url: string,
    options: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {},
  ): Promise<Omit<Page, "trail">> {
    const target = new URL(url);
    const headers: Record<string, string> = { accept: "text/html,*/*", ...options.headers };
    const cookie = await this.jar.getCookieString(url);
    if (cookie) headers.cookie = cookie;
    let body: string | undefined;
    if (options.form) {
      body = new URLSearchParams(options.form).toString();
      headers["content-type"] = "application/x-www-form-urlencoded";
    }
    const send = target.protocol === "https:" ? httpsRequest : httpRequest;
    const response = await new Promise<Omit<Page, "trail">>((resolve, reject) => {
      const req = send(
        target,
        { method: options.method ?? (options.form ? "POST" : "GET"), headers, ca: this.ca, agent: false },
        (res) => {
          let text = "";
          res.on("data", (chunk) => {
            text += chunk;
          });
          res.on("end", () => resolve({ url, status: res.statusCode ?? 0, headers: res.headers, body: text }));
        },
      );
      req.on("error", reject);
      req.end(body);
    });
    const setCookie = response.headers["set-cookie"] ?? [];
    for (const line of Array.isArray(setCookie) ? setCookie : [setCookie]) {
      await this.jar.setCookie(line, url, { ignoreError: true });
    }
    return response;
  }

  /** Follows redirects (GET after 301/302/303) until a page answers. */
  async navigate(
    url: string,
    options: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {},
  ): Promise<Page> {
    const trail: string[] = [];
    let current = url;
    let next = options;
    for (let hop = 0; hop < 20; hop++) {
      trail.push(current);
      const response = await this.fetch(current, next);
      const location = response.headers.location;
      if (response.status >= 300 && response.status < 400 && typeof location === "string") {
        current = new URL(location, current).toString();
        // The GET after a redirect is a navigation: no Origin (browsers send it with POSTs).
        const { origin: _origin, ...headers } = options.headers ?? {};
        next = { headers };
        continue;
      }
      return { ...response, trail };
    }
    throw new Error(`too many redirects from ${url}`);
  }

  /** Submits a form of the page (the first by default) with some fields changed. */
  submit(page: Page, fields: Record<string, string> = {}, index = 0): Promise<Page> {
    const form = formsOf(page)[index];
    if (!form) throw new Error(`no form on ${page.url} (status ${page.status}):\n${page.body.slice(0, 500)}`);
    const values = { ...form.fields, ...fields };
    // A browser sends the Origin of the page a form is posted from.
    if (form.method === "POST") {
      return this.navigate(form.action, { form: values, headers: { origin: new URL(page.url).origin } });
    }
    const target = new URL(form.action);
    for (const [name, value] of Object.entries(values)) target.searchParams.set(name, value);
    return this.navigate(target.toString());
  }
}
