// `virtualcluster platform login <url>`: with an access key (checked with POST selves), a username and password
// (POST /auth/password/login issues a Login key), or else through the browser with a single sign-on connector
// (browser-login.ts); the key is then stored in the client config (0600).

import { readFileSync } from "node:fs";
import { type Command, Option } from "commander";
import { PlatformError } from "../virtualcluster/lifecycle/platform-client.ts";
import type { PlatformLogin } from "../virtualcluster/lifecycle/platform-login.ts";
import { browserLogin, chooseConnector, type LoginMethods } from "./browser-login.ts";
import { readClientConfig, writeClientConfig } from "./client-config.ts";
import { CommandError } from "./command-error.ts";
import { describeSelf } from "./describe-self.ts";
import { platformClient } from "./platform-session.ts";
import { normalizePlatformUrl } from "./platform-url.ts";
import { runAction } from "./run-action.ts";
import { colorEnabled, promptHidden, readFirstLine, styles, withSpinner } from "./terminal.ts";

/**
 * A server's message without its closing advice "Please login again" and the full stop before it. A search and a
 * trim: /\.?\s*Please login again\.?$/ was quadratic on a message with a long run of whitespace.
 */
export function withoutLoginAdvice(message: string): string {
  const at = message.search(/Please login again\.?$/i);
  if (at < 0) return message;
  const before = message.slice(0, at).trimEnd();
  return before.endsWith(".") ? before.slice(0, -1) : before;
}

export const LOGIN_PATH = "/auth/password/login";
export const LOGOUT_PATH = "/auth/logout";
export const INFO_PATH = "/auth/info";

interface LoginFlags {
  accessKey?: string;
  username?: string;
  passwordStdin?: boolean;
  insecure?: boolean;
  caFile?: string;
  allowHttp?: boolean;
  connector?: string;
  /** commander's --no-browser. */
  browser?: boolean;
}

/** Base64 of a PEM file with at least one certificate. */
function readCaFile(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new CommandError(`--ca-file ${file}: cannot read the file (${(error as NodeJS.ErrnoException).code})`);
  }
  if (!text.includes("-----BEGIN CERTIFICATE-----")) {
    throw new CommandError(`--ca-file ${file}: not a PEM certificate file`);
  }
  return Buffer.from(text).toString("base64");
}

async function readPassword(username: string, fromStdin: boolean): Promise<string> {
  const password =
    fromStdin || !process.stdin.isTTY ? await readFirstLine() : await promptHidden(`Password for ${username}: `);
  if (password === "") throw new CommandError("no password given");
  return password;
}

async function passwordLogin(base: PlatformLogin, username: string, password: string): Promise<string> {
  const client = platformClient(base);
  const reply = await client.request<{ accessKey?: unknown }>("POST", LOGIN_PATH, {
    body: { username, password },
    anonymous: true,
  });
  if (typeof reply.accessKey !== "string" || reply.accessKey === "") {
    throw new PlatformError(`${new URL(base.host).host} did not return an access key: not the platform's login`);
  }
  return reply.accessKey;
}

/** Lists the platform's login methods, then logs in through the browser with the chosen connector. */
async function ssoLogin(base: PlatformLogin, flags: LoginFlags): Promise<string> {
  const methods = await platformClient(base).request<LoginMethods>("GET", INFO_PATH, { anonymous: true });
  if (!Array.isArray(methods?.connectors) || typeof methods.password?.enabled !== "boolean") {
    throw new PlatformError(`${new URL(base.host).host} did not list its login methods: not the platform`);
  }
  const connector = chooseConnector(methods, flags.connector);
  const print = (line: string) => void process.stderr.write(`${line}\n`);
  print(`Login methods of ${base.host}:`);
  if (methods.password.enabled) print("  password       (--username)");
  for (const c of methods.connectors) {
    print(`  ${c.id.padEnd(14)} ${c.displayName} (${c.type})${c.id === connector ? "  <- logging in with this" : ""}`);
  }
  return browserLogin({ host: base.host, connector, openBrowser: flags.browser !== false, print });
}

async function login(url: string, flags: LoginFlags): Promise<void> {
  const host = normalizePlatformUrl(url, { allowHttp: flags.allowHttp });
  if (flags.accessKey !== undefined && flags.username !== undefined) {
    throw new CommandError("use either --access-key or --username, not both");
  }
  if (flags.connector !== undefined && (flags.accessKey !== undefined || flags.username !== undefined)) {
    throw new CommandError("--connector is for browser login: leave out --access-key and --username");
  }
  if (flags.passwordStdin && flags.username === undefined) throw new CommandError("--password-stdin needs --username");
  const base: PlatformLogin = { host };
  if (flags.insecure) base.insecure = true;
  if (flags.caFile) base.certificateAuthorityData = readCaFile(flags.caFile);
  if (host.startsWith("http:")) {
    process.stderr.write("Warning: plain http: the access key travels unencrypted\n");
  }

  let accessKey: string;
  let issued = false;
  if (flags.username !== undefined) {
    const password = await readPassword(flags.username, Boolean(flags.passwordStdin));
    accessKey = await withSpinner(`Logging in to ${host}`, () => passwordLogin(base, flags.username!, password));
    issued = true;
  } else if (flags.accessKey === undefined) {
    accessKey = await ssoLogin(base, flags);
    issued = true;
  } else {
    accessKey = flags.accessKey === "-" ? (await readFirstLine()).trim() : flags.accessKey!.trim();
    if (accessKey === "") throw new CommandError("the access key is empty");
  }

  const { host: _, ...trust } = base;
  const stored: PlatformLogin = { host, accessKey, ...trust };
  const client = platformClient(stored);
  try {
    const self = await withSpinner(`Checking the access key with ${host}`, () => client.self()).catch((error) => {
      if (error instanceof PlatformError && error.code === 401) {
        // The server's "Please login again" is advice for a stored key; this is the login itself.
        const reason = withoutLoginAdvice(error.message);
        throw new PlatformError(`${new URL(host).host} refused the access key: ${reason}`, 401);
      }
      throw error;
    });
    const config = readClientConfig();
    config.platform = stored;
    writeClientConfig(config);
    const ok = styles(colorEnabled(process.stdout)).green("Logged in");
    process.stdout.write(`${ok} to ${host} as ${describeSelf(self)}\n`);
  } catch (error) {
    // A key this command created must not outlive a failed login.
    if (issued) await client.request("POST", LOGOUT_PATH).catch(() => {});
    throw error;
  }
}

export function addLoginCommand(platform: Command): void {
  platform
    .command("login")
    .description("Log in and store the key in ~/.virtualcluster (mode 0600)")
    .argument("<url>", "platform URL (https:// is assumed without a scheme; a kubeconfig server URL works too)")
    .option("--access-key <key>", "access key to log in with (- reads it from standard input)")
    .option("--username <user>", "log in with this user's password instead (prompted without echo)")
    .option("--connector <id>", "browser login: the single sign-on connector to use (see the listed methods)")
    .option("--no-browser", "browser login: print the login address instead of opening a browser")
    .option("--password-stdin", "with --username: read the password from standard input")
    .addOption(new Option("--insecure", "do not verify the platform's TLS certificate").conflicts("caFile"))
    .option("--ca-file <file>", "PEM file of the CA that signed the platform's certificate")
    .option("--allow-http", "accept a plain http:// URL (the key then travels unencrypted)")
    .addHelpText(
      "after",
      `
Examples:
  virtualcluster platform login https://platform.example.com --access-key "$ACCESS_KEY"
  virtualcluster platform login 127.0.0.1:8443 --ca-file ./data/pki/ca.crt --access-key "$(cat ./data/admin-access-key)"
  virtualcluster platform login platform.example.com --username alice
  virtualcluster platform login platform.example.com                      (browser login, single sign-on)
  virtualcluster platform login platform.example.com --connector oidc --no-browser
  echo "$PASSWORD" | virtualcluster platform login platform.example.com --username alice --password-stdin

VIRTUALCLUSTER_HOME relocates ~/.virtualcluster.`,
    )
    .action(runAction((url: string, flags: LoginFlags) => login(url, flags)));
}
