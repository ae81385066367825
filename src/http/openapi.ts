// The OpenAPI documents the server publishes, built from the resource definitions with the same object schema
// validation uses. Serve them as:
//   GET /openapi/v3               -> buildOpenApiV3Index(...)
//   GET /openapi/v3/apis/<g>/<v>  -> buildOpenApiV3Document(...).document with ETag `"<hash>"`; when the URL carries
//   GET /openapi/v3/api/v1           ?hash=<hash>, also `Cache-Control: public, immutable` (kubectl caches by it)
//   GET /openapi/v2               -> buildOpenApiV2(...) as JSON, or for kubectl 1.27 and 1.28, which ask for
//                                    application/com.github.proto-openapi.spec.v2@v1.0+protobuf, the same document
//                                    as the openapi.v2.Document message (openapi-v2-protobuf.ts).
// Documents are cached per definitions array (built once), so treat them as read-only.

import { objectSchemaOf } from "../apimachinery/schema.ts";
import type { ResourceDefinition } from "../registry/types.ts";
import { createOpenApiBuilder, type GroupVersion } from "./openapi-builder.ts";

const builder = createOpenApiBuilder(objectSchemaOf);

/**
 * GET /openapi/v3: `{"paths": {"apis/<g>/<v>": {"serverRelativeURL": "/openapi/v3/apis/<g>/<v>?hash=<H>"}, "api/v1": ...}}`.
 * `groupVersions` ("management.platform.sh/v1", "v1" or {group, version}) restricts the list; default: all served.
 */
export function buildOpenApiV3Index(
  definitions: ResourceDefinition[],
  groupVersions?: (GroupVersion | string)[],
): object {
  return builder.buildOpenApiV3Index(definitions, groupVersions);
}

/** The OpenAPI 3.0 document of one group-version and its stable hash (use it as the ETag). */
export function buildOpenApiV3Document(
  definitions: ResourceDefinition[],
  group: string,
  version: string,
): { document: object; hash: string } {
  return builder.buildOpenApiV3Document(definitions, group, version);
}

/** The swagger 2.0 document of every served group, for older clients. */
export function buildOpenApiV2(definitions: ResourceDefinition[]): object {
  return builder.buildOpenApiV2(definitions);
}
