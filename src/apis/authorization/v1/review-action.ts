// The create-only handler every self review shares: read the posted spec, answer it echoed with the status the
// review computes for the caller, as upstream does (no name, no stored object).

import { isPlainObject, type JsonMap, type KubeObject } from "../../../apimachinery/types.ts";
import type { ActionHandler, RequestContext } from "../../../registry/types.ts";

export interface ReviewActionOptions {
  apiVersion: string;
  kind: string;
  description: string;
  schema: JsonMap;
  /** The review's status for the caller and the posted spec ({} when none was posted). */
  status: (context: RequestContext, spec: JsonMap) => Promise<JsonMap>;
}

export function reviewAction(options: ReviewActionOptions): ActionHandler {
  const { apiVersion, kind, description, schema } = options;
  return {
    kind,
    description,
    schema,
    verbs: ["create"],
    async handle({ context, body }) {
      const spec = isPlainObject(body) && isPlainObject(body.spec) ? body.spec : {};
      const status = await options.status(context, spec);
      const response: KubeObject = { apiVersion, kind, metadata: { creationTimestamp: null }, spec, status };
      return response;
    },
  };
}
