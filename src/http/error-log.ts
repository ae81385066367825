// What a log line may say about an error: its name, message and stack, and which resource the request was for;
// never a header, body or query value.

import type { Logger } from "pino";
import type { RequestInfo } from "./request-info.ts";

export function errorSummary(error: unknown): { name?: string; message: string; stack?: string } {
  if (error instanceof Error) return { name: error.name, message: error.message, stack: error.stack };
  return { message: String(error) };
}

/** Logs a server fault (a 500) with the request's verb and resource, or the path of a non-resource request. */
export function logInternalError(logger: Logger | undefined, error: unknown, info: RequestInfo | undefined): void {
  logger?.error(
    {
      err: errorSummary(error),
      verb: info?.verb,
      group: info?.group,
      resource: info?.resource,
      path: info?.resourceRequest ? undefined : info?.path,
    },
    "internal error serving request",
  );
}
