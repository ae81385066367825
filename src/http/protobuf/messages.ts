// Every protobuf message the server decodes, compiled once from the tables, by full name
// (k8s.io.api.core.v1.Namespace). A ResourceDefinition's `protobuf.message` names one of these.

import type { MessageSpec } from "./message-schema.ts";
import { compileMessageTables } from "./message-schema.ts";
import { authenticationV1Messages } from "./messages-authentication.ts";
import { authorizationV1Messages } from "./messages-authorization.ts";
import { coreV1Messages } from "./messages-core.ts";
import { metaV1Messages } from "./messages-meta.ts";
import { rbacV1Messages } from "./messages-rbac.ts";

const MESSAGES = compileMessageTables([
  metaV1Messages,
  coreV1Messages,
  rbacV1Messages,
  authorizationV1Messages,
  authenticationV1Messages,
]);

export const DELETE_OPTIONS_MESSAGE = "k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions";

/** The message spec for a full name, or undefined when the server has no table for it. */
export function protobufMessage(name: string): MessageSpec | undefined {
  return MESSAGES.get(name);
}
