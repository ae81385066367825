// The web console, served by the platform on its HTTPS port (plugin routes; the API stays under /apis, /api and
// /kubernetes/management):
//   GET /, /login, /users, /teams, ... (CONSOLE_PAGES, and paths below them)  the page, for browser navigations
//       (Accept: text/html) only: other clients keep the API's answers (GET / is the root path list). Public: the
//       page itself holds nothing; the data comes from the API with the session cookie. Every answer is built from
//       the live uiSettings (favicon, customCss, customJavaScript) with a Content-Security-Policy (console-csp.ts),
//       so a Config change shows on the next page load.
//   GET /assets/*           the bundle (hashed names: cached for a year), gzipped when the browser takes it
//   GET /console/settings   branding for the page (logos, colors, nav bar buttons, legal text, version): public,
//                           since the login page shows it

import type { IncomingHttpHeaders } from "node:http";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { errors } from "../../apimachinery/errors.ts";
import { NAV_BAR_POSITIONS } from "../../config/schema-other.ts";
import type { LiveSettings } from "../../config/settings.ts";
import { consoleContentSecurityPolicy } from "./console-csp.ts";
import type { ConsoleFiles } from "./console-files.ts";

/** The console's pages (and every path below each). */
export const CONSOLE_PAGES = [
  "/",
  "/login",
  "/users",
  "/teams",
  "/access-keys",
  "/profile",
  "/projects",
  "/clusters",
  "/config",
  "/audit",
] as const;
export const CONSOLE_SETTINGS_PATH = "/console/settings";
/** Public for every client: the bundle and the branding. */
export const CONSOLE_PUBLIC_PATHS = ["/assets/*", CONSOLE_SETTINGS_PATH];

const UI_STRINGS = [
  "logoURL",
  "smallLogoURL",
  "faviconURL",
  "logoBackgroundColor",
  "primaryColor",
  "sidebarColor",
  "accentColor",
  "legalTemplate",
] as const;

export function acceptsHtml(headers: IncomingHttpHeaders): boolean {
  return /\btext\/html\b/i.test(String(headers.accept ?? ""));
}

/** A console page path: one of CONSOLE_PAGES or below one ("/" only itself). */
export function isConsolePage(path: string): boolean {
  return CONSOLE_PAGES.some((page) => path === page || (page !== "/" && path.startsWith(`${page}/`)));
}

/** For ApiServerOptions.isPublicRequest: a browser navigation to a console page. */
export function isConsolePageRequest(path: string, headers: IncomingHttpHeaders): boolean {
  return isConsolePage(path) && acceptsHtml(headers);
}

const escapeAttribute = (value: string) =>
  value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

const urls = (value: unknown): string[] =>
  (Array.isArray(value) ? value : []).filter(
    (item): item is string => typeof item === "string" && /^https?:\/\//i.test(item),
  );

/** The built index.html with the live favicon, custom style sheets (after ours: they win) and custom scripts. */
export function consolePage(template: string, ui: Record<string, unknown>): string {
  const head: string[] = [];
  const favicon = typeof ui.faviconURL === "string" && ui.faviconURL ? ui.faviconURL : "";
  if (favicon) head.push(`<link rel="icon" href="${escapeAttribute(favicon)}">`);
  for (const href of urls(ui.customCss)) head.push(`<link rel="stylesheet" href="${escapeAttribute(href)}">`);
  for (const src of urls(ui.customJavaScript)) head.push(`<script defer src="${escapeAttribute(src)}"></script>`);
  let page = template;
  if (favicon) page = page.replace(/<link rel="icon"[^>]*>/, "");
  return page.replace("</head>", `${head.join("\n")}\n</head>`);
}

/** What the page shows before and after login (no secrets live in uiSettings). */
export function consoleSettings(ui: Record<string, unknown>, version: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of UI_STRINGS) if (typeof ui[name] === "string" && ui[name]) out[name] = ui[name];
  out.platformVersion = typeof ui.platformVersion === "string" && ui.platformVersion ? ui.platformVersion : version;
  out.navBarButtons = (Array.isArray(ui.navBarButtons) ? ui.navBarButtons : [])
    .filter((button): button is Record<string, unknown> => typeof button === "object" && button !== null)
    .map((button) => ({
      text: typeof button.text === "string" ? button.text : "",
      link: typeof button.link === "string" ? button.link : "",
      icon: typeof button.icon === "string" ? button.icon : "",
      position: NAV_BAR_POSITIONS.includes(button.position as (typeof NAV_BAR_POSITIONS)[number])
        ? button.position
        : "BottomEnd",
    }));
  return out;
}

const SECURITY_HEADERS = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "x-frame-options": "DENY",
};

export interface ConsoleRoutesOptions {
  settings: LiveSettings;
  files: ConsoleFiles;
  /** The platform's version (gitVersion), shown when uiSettings.platformVersion is empty. */
  version: string;
}

export function consoleRoutes(options: ConsoleRoutesOptions): (app: FastifyInstance) => void {
  const { settings, files } = options;
  const ui = () => settings.current().ui;

  const page = async (_request: FastifyRequest, reply: FastifyReply) => {
    reply.headers(SECURITY_HEADERS).header("cache-control", "no-store");
    if (!files.index) {
      return reply
        .code(503)
        .header("content-type", "text/plain; charset=utf-8")
        .send("The web console is not built: run `npm run build` (npm install runs it) and restart the platform.\n");
    }
    return reply
      .code(200)
      .header("content-type", "text/html; charset=utf-8")
      .header("content-security-policy", consoleContentSecurityPolicy(ui()))
      .send(consolePage(files.index, ui()));
  };

  const asset = async (request: FastifyRequest, reply: FastifyReply) => {
    const path = new URL(request.url, "https://platform.invalid").pathname;
    const file = files.files.get(decodeURIComponent(path));
    if (!file) throw errors.pathNotFound();
    reply
      .headers(SECURITY_HEADERS)
      .header("content-type", file.contentType)
      .header("cache-control", "public, max-age=31536000, immutable")
      .header("vary", "accept-encoding");
    if (file.gzip && /\bgzip\b/.test(String(request.headers["accept-encoding"] ?? ""))) {
      return reply.code(200).header("content-encoding", "gzip").send(file.gzip);
    }
    return reply.code(200).send(file.body);
  };

  return (app) => {
    // Pages answer browser navigations only; the same path for any other client goes to the API's routes.
    app.addConstraintStrategy({
      name: "consolePage",
      storage() {
        const handlers = new Map<string, unknown>();
        return {
          get: (value: string) => (handlers.get(value) ?? null) as never,
          set: (value: string, handler: unknown) => void handlers.set(value, handler),
        };
      },
      deriveConstraint: (request: { headers: IncomingHttpHeaders }) => (acceptsHtml(request.headers) ? "html" : ""),
      mustMatchWhenDerived: false,
    });
    const constraints = { consolePage: "html" };
    for (const path of CONSOLE_PAGES) {
      app.get(path, { constraints }, page);
      if (path !== "/") app.get(`${path}/*`, { constraints }, page);
    }
    app.get("/assets/*", asset);
    app.get(CONSOLE_SETTINGS_PATH, async (_request, reply) =>
      reply
        .code(200)
        .header("content-type", "application/json")
        .header("cache-control", "no-store")
        .send(JSON.stringify(consoleSettings(ui(), options.version))),
    );
  };
}
