// Node's `http` module as its CommonJS exports. An ECMAScript `import ... from "node:http"` builds a module facade
// that reads every export once, and three of them (WebSocket, CloseEvent, MessageEvent) are getters that load Node's
// fetch implementation (undici): about 5 MiB resident in every process that imports `http` that way, for classes
// none of ours uses (issue 36). Import `http` from here instead; type-only imports of "node:http" are erased and
// cost nothing. `src/utils/node-http.test.ts` keeps value imports of "node:http" out of the sources.

export const http: typeof import("node:http") = process.getBuiltinModule("node:http");
