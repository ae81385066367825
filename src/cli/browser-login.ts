// Browser login for `platform login` without --access-key: a one-shot HTTP server on 127.0.0.1 (random port)
// receives the Login key that the platform's callback page posts to it, checked against a one-time state; the
// browser is opened on the platform's /auth/<connector>/login (or the address is printed with --no-browser).

import { spawn } from "node:child_process";
import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { http } from "../utils/node-http.ts";
import { CommandError } from "./command-error.ts";

export interface LoginMethods {
  password: { enabled: boolean };
  connectors: { id: string; displayName: string; type: string }[];
}

export interface BrowserLoginOptions {
  /** The platform's base URL (https://host[:port]). */
  host: string;
  connector: string;
  openBrowser: boolean;
  /** Where the address and progress are printed. */
  print(line: string): void;
  timeoutMs?: number;
}

const MAX_BODY = 64 * 1024;
const DEFAULT_TIMEOUT_MS = 5 * 60 * 1000;

/** Which connector to use: --connector, or the only one there is. */
export function chooseConnector(methods: LoginMethods, requested: string | undefined): string {
  const ids = methods.connectors.map((c) => c.id);
  if (requested !== undefined) {
    if (!ids.includes(requested)) {
      throw new CommandError(
        `the platform has no login connector "${requested}"${ids.length ? ` (it has: ${ids.join(", ")})` : ""}`,
      );
    }
    return requested;
  }
  if (ids.length === 1) return ids[0];
  if (ids.length === 0) {
    throw new CommandError(
      methods.password.enabled
        ? "the platform has no single sign-on connector: log in with --username or --access-key"
        : "the platform has no single sign-on connector and password login is off: log in with --access-key",
    );
  }
  throw new CommandError(`the platform has several login connectors; choose one with --connector (${ids.join(", ")})`);
}

function page(title: string, text: string): string {
  const safe = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${safe(title)}</title></head><body style="font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto"><h1>${safe(title)}</h1><p>${safe(text)}</p></body></html>`;
}

function answer(response: ServerResponse, status: number, title: string, text: string): void {
  response.writeHead(status, {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-store",
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'",
  });
  response.end(page(title, text));
}

function openInBrowser(url: string): void {
  const command =
    process.env.BROWSER ||
    (process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer.exe" : "xdg-open");
  try {
    const child = spawn(command, [url], { stdio: "ignore", detached: true });
    child.on("error", () => {});
    child.unref();
  } catch {
    // The address is printed as well.
  }
}

const sameText = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** Runs the browser login; resolves to the Login key. */
export async function browserLogin(options: BrowserLoginOptions): Promise<string> {
  const state = randomBytes(32).toString("base64url");
  let settle: { resolve(key: string): void; reject(error: Error): void } | undefined;
  const received = new Promise<string>((resolve, reject) => {
    settle = { resolve, reject };
  });
  const server = http.createServer((request: IncomingMessage, response: ServerResponse) => {
    if (new URL(request.url ?? "/", "http://127.0.0.1").pathname !== "/callback") {
      answer(response, 404, "Not found", "This address only receives the platform login.");
      return;
    }
    if (request.method !== "POST") {
      answer(response, 405, "Method not allowed", "The platform posts the login here.");
      return;
    }
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => {
      body += chunk;
      if (body.length > MAX_BODY) request.destroy();
    });
    request.on("end", () => {
      const form = new URLSearchParams(body);
      const key = form.get("accessKey") ?? "";
      if (!sameText(form.get("state") ?? "", state) || key === "") {
        answer(response, 400, "Login not accepted", "This login was not started by this terminal. Start it again.");
        return;
      }
      answer(response, 200, "Logged in", "The terminal has the login. You can close this window.");
      settle?.resolve(key);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const port = (server.address() as AddressInfo).port;
  const login = new URL(`${options.host}/auth/${encodeURIComponent(options.connector)}/login`);
  login.searchParams.set("cli_redirect", `http://127.0.0.1:${port}/callback`);
  login.searchParams.set("cli_state", state);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const timer = setTimeout(
    () => settle?.reject(new CommandError(`no login arrived within ${Math.round(timeoutMs / 1000)} s; try again`)),
    timeoutMs,
  );
  if (options.openBrowser) {
    options.print(`Opening your browser to log in. If it does not open, visit:\n  ${login}`);
    openInBrowser(login.toString());
  } else {
    options.print(`Visit this address in a browser to log in:\n  ${login}`);
  }
  try {
    return await received;
  } finally {
    clearTimeout(timer);
    server.closeAllConnections();
    server.close();
  }
}
