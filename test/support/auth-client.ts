// An HTTPS client for auth tests: one keep-alive agent trusting the platform's CA, any bearer token (or none, or a
// raw Authorization header), JSON bodies, and helpers to create users, passwords and keys as the admin.

import { Agent, request } from "node:https";

export const API = "/apis/management.platform.sh/v1";

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read replies field by field
  json(): any;
}

export interface SendOptions {
  token?: string;
  /** A raw Authorization header (wins over token). */
  authorization?: string;
  body?: unknown;
  contentType?: string;
  /** The Accept header; JSON unless given. */
  accept?: string;
  /** More headers (a repeated header as an array). */
  headers?: Record<string, string | string[]>;
}

export class AuthClient {
  readonly agent: Agent;
  private readonly base: string;

  /** `maxSockets`: requests sent at once (default 16; more wait in the client). */
  constructor(base: string, ca: string, options: { maxSockets?: number } = {}) {
    this.base = base;
    this.agent = new Agent({ keepAlive: true, ca, maxSockets: options.maxSockets ?? 16 });
  }

  send(method: string, path: string, options: SendOptions = {}): Promise<Reply> {
    const headers: Record<string, string | string[]> = {
      ...options.headers,
      accept: options.accept ?? "application/json",
    };
    if (options.authorization !== undefined) headers.authorization = options.authorization;
    else if (options.token) headers.authorization = `Bearer ${options.token}`;
    let payload: string | undefined;
    if (options.body !== undefined) {
      payload = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
      headers["content-type"] = options.contentType ?? "application/json";
    }
    return new Promise((resolve, reject) => {
      const req = request(`${this.base}${path}`, { method, headers, agent: this.agent }, (res) => {
        let body = "";
        res.on("data", (chunk) => {
          body += chunk;
        });
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body) }),
        );
      });
      req.on("error", reject);
      req.end(payload);
    });
  }

  /** Reads a watch stream until `count` events arrived or the server ends it; returns the raw lines. */
  watch(path: string, token: string, count: number): Promise<string[]> {
    return new Promise((resolve, reject) => {
      const req = request(
        `${this.base}${path}`,
        { headers: { authorization: `Bearer ${token}` }, agent: false, ca: (this.agent.options as { ca?: string }).ca },
        (res) => {
          let text = "";
          const lines = () => text.split("\n").filter((line) => line.trim() !== "");
          res.on("data", (chunk) => {
            text += chunk;
            if (lines().length >= count) {
              req.destroy();
              resolve(lines());
            }
          });
          res.on("end", () => resolve(lines()));
        },
      );
      req.on("error", (error) => (error.message.includes("aborted") ? undefined : reject(error)));
      req.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }

  async createUser(admin: string, name: string, spec: Record<string, unknown> = {}): Promise<void> {
    const reply = await this.send("POST", `${API}/users`, {
      token: admin,
      body: { apiVersion: "management.platform.sh/v1", kind: "User", metadata: { name }, spec },
    });
    if (reply.status !== 201) throw new Error(`creating user ${name}: ${reply.status} ${reply.body}`);
  }

  async createTeam(admin: string, name: string, spec: Record<string, unknown> = {}): Promise<void> {
    const reply = await this.send("POST", `${API}/teams`, {
      token: admin,
      body: { apiVersion: "management.platform.sh/v1", kind: "Team", metadata: { name }, spec },
    });
    if (reply.status !== 201) throw new Error(`creating team ${name}: ${reply.status} ${reply.body}`);
  }

  async setPassword(token: string, user: string, password: string, currentPassword?: string): Promise<Reply> {
    return this.send("POST", `${API}/users/${user}/password`, { token, body: { spec: { password, currentPassword } } });
  }

  /** Creates a key (its display name is its name unless `spec` gives one); resolves to its plain value. */
  async createKey(token: string, name: string, spec: Record<string, unknown> = {}): Promise<string> {
    const reply = await this.send("POST", `${API}/ownedaccesskeys`, {
      token,
      body: {
        apiVersion: "management.platform.sh/v1",
        kind: "OwnedAccessKey",
        metadata: { name },
        spec: { displayName: name, ...spec },
      },
    });
    if (reply.status !== 201) throw new Error(`creating key ${name}: ${reply.status} ${reply.body}`);
    return reply.json().spec.key;
  }

  async login(username: string, password: string): Promise<Reply> {
    return this.send("POST", "/auth/password/login", { body: { username, password } });
  }
}
