// The swagger 2.0 document as the protobuf message openapi.v2.Document (gnostic-models openapiv2/OpenAPIv2.proto),
// which kubectl 1.27 and 1.28 ask for on /openapi/v2 to find a kind's schema (by x-kubernetes-group-version-kind)
// for client-side apply. The apiserver makes it by compiling the JSON document with gnostic and marshalling it; this
// writes the same message straight from the JSON document:
//   - fields in field-number order, proto3 zero values left out, present objects written even when empty (Go's
//     reader tells "no properties" from "empty properties");
//   - `type` is a TypeItem (repeated string), `items` an ItemsItem (repeated Schema), `additionalProperties` a
//     oneof of a Schema and a bool;
//   - JSON objects keyed by name (paths, definitions, properties, responses...) become repeated {name, value} pairs;
//   - `x-*` keys become vendor extensions: NamedAny whose Any holds the value as YAML text (JSON is YAML), as do
//     `default`, `example` and `enum` values;
//   - parameters, responses and security definitions pick their oneof case as gnostic does: `$ref` is a
//     JsonReference, `in` selects the parameter kind, `type`/`flow` the security scheme.
// Keys the message has no field for are left out and reported to `skipped` (tests require none for our documents).

import { isPlainObject, type JsonMap } from "../apimachinery/types.ts";
import { WireWriter } from "./protobuf/wire-writer.ts";

/** What kubectl asks for, and what the apiserver also accepts and answers with. */
export const OPENAPI_V2_PROTOBUF_TYPES = [
  "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
  "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
] as const;
export const OPENAPI_V2_PROTOBUF_CONTENT_TYPE = OPENAPI_V2_PROTOBUF_TYPES[1];

export interface OpenApiV2ProtobufOptions {
  /** Told the JSON path of every key the message has no field for. */
  skipped?: (path: string) => void;
}

// One message per line of fields `<json key> <number> [type]`; type: string (default), bool, double, int64,
// strings (repeated string), any, anys (repeated Any), ext (the `x-*` keys; the key is written `x-`), a message
// name, `[]Name` (repeated message), or `map:Name` / `map:any` / `map:string` (a message whose field 1 repeats
// {1 name, 2 value}). Messages that pick a oneof case by content are written in code (ONEOFS below).
const NUMERIC_V2 =
  "maximum # double, exclusiveMaximum # bool, minimum # double, exclusiveMinimum # bool, maxLength # int64, " +
  "minLength # int64, pattern #, maxItems # int64, minItems # int64, uniqueItems # bool, enum # anys, multipleOf # double";

/** Numbers the fields of a run of `#` placeholders from `first` on. */
function numbered(text: string, first: number): string {
  let next = first;
  return text.replace(/#/g, () => String(next++));
}

const PARAMETER_HEAD = "required 1 bool, in 2, description 3, name 4";
const QUERY_OR_FORM =
  `${PARAMETER_HEAD}, allowEmptyValue 5 bool, type 6, format 7, items 8 PrimitivesItems, collectionFormat 9, ` +
  `default 10 any, ${numbered(NUMERIC_V2, 11)}, x- 23`;
const PATH_OR_HEADER =
  `${PARAMETER_HEAD}, type 5, format 6, items 7 PrimitivesItems, collectionFormat 8, default 9 any, ` +
  `${numbered(NUMERIC_V2, 10)}, x- 22`;
const PRIMITIVE_HEAD = "type 1, format 2, items 3 PrimitivesItems, collectionFormat 4, default 5 any";
const OAUTH2_HEAD = "type 1, flow 2, scopes 3 map:string";

const MESSAGES: Record<string, string> = {
  Document:
    "swagger 1, info 2 Info, host 3, basePath 4, schemes 5 strings, consumes 6 strings, produces 7 strings, " +
    "paths 8 Paths, definitions 9 map:Schema, parameters 10 map:Parameter, responses 11 map:Response, " +
    "security 12 []SecurityRequirement, securityDefinitions 13 map:SecurityDefinitionsItem, tags 14 []Tag, " +
    "externalDocs 15 ExternalDocs, x- 16",
  Info: "title 1, version 2, description 3, termsOfService 4, contact 5 Contact, license 6 License, x- 7",
  Contact: "name 1, url 2, email 3, x- 4",
  License: "name 1, url 2, x- 3",
  ExternalDocs: "description 1, url 2, x- 3",
  Tag: "name 1, description 2, externalDocs 3 ExternalDocs, x- 4",
  PathItem:
    "$ref 1, get 2 Operation, put 3 Operation, post 4 Operation, delete 5 Operation, options 6 Operation, " +
    "head 7 Operation, patch 8 Operation, parameters 9 []ParametersItem, x- 10",
  Operation:
    "tags 1 strings, summary 2, description 3, externalDocs 4 ExternalDocs, operationId 5, produces 6 strings, " +
    "consumes 7 strings, parameters 8 []ParametersItem, responses 9 Responses, schemes 10 strings, " +
    "deprecated 11 bool, security 12 []SecurityRequirement, x- 13",
  BodyParameter: "description 1, name 2, in 3, required 4 bool, schema 5 Schema, x- 6",
  HeaderParameterSubSchema: PATH_OR_HEADER,
  FormDataParameterSubSchema: QUERY_OR_FORM,
  QueryParameterSubSchema: QUERY_OR_FORM,
  PathParameterSubSchema: PATH_OR_HEADER,
  PrimitivesItems: `${PRIMITIVE_HEAD}, ${numbered(NUMERIC_V2, 6)}, x- 18`,
  Header: `${PRIMITIVE_HEAD}, ${numbered(NUMERIC_V2, 6)}, description 18, x- 19`,
  Response: "description 1, schema 2 SchemaItem, headers 3 map:Header, examples 4 map:any, x- 5",
  Schema:
    "$ref 1, format 2, title 3, description 4, default 5 any, multipleOf 6 double, maximum 7 double, " +
    "exclusiveMaximum 8 bool, minimum 9 double, exclusiveMinimum 10 bool, maxLength 11 int64, minLength 12 int64, " +
    "pattern 13, maxItems 14 int64, minItems 15 int64, uniqueItems 16 bool, maxProperties 17 int64, " +
    "minProperties 18 int64, required 19 strings, enum 20 anys, additionalProperties 21 AdditionalPropertiesItem, " +
    "type 22 TypeItem, items 23 ItemsItem, allOf 24 []Schema, properties 25 map:Schema, discriminator 26, " +
    "readOnly 27 bool, xml 28 Xml, externalDocs 29 ExternalDocs, example 30 any, x- 31",
  FileSchema:
    "format 1, title 2, description 3, default 4 any, required 5 strings, type 6, readOnly 7 bool, " +
    "externalDocs 8 ExternalDocs, example 9 any, x- 10",
  Xml: "name 1, namespace 2, prefix 3, attribute 4 bool, wrapped 5 bool, x- 6",
  JsonReference: "$ref 1, description 2",
  BasicAuthenticationSecurity: "type 1, description 2, x- 3",
  ApiKeySecurity: "type 1, name 2, in 3, description 4, x- 5",
  Oauth2ImplicitSecurity: `${OAUTH2_HEAD}, authorizationUrl 4, description 5, x- 6`,
  Oauth2PasswordSecurity: `${OAUTH2_HEAD}, tokenUrl 4, description 5, x- 6`,
  Oauth2ApplicationSecurity: `${OAUTH2_HEAD}, tokenUrl 4, description 5, x- 6`,
  Oauth2AccessCodeSecurity: `${OAUTH2_HEAD}, authorizationUrl 4, tokenUrl 5, description 6, x- 7`,
};

interface Field {
  key: string;
  number: number;
  type: string;
}

const TABLES = new Map<string, Map<string, Field>>(
  Object.entries(MESSAGES).map(([name, text]) => [
    name,
    new Map(
      text.split(", ").map((item) => {
        const [key, number, type = "string"] = item.split(" ");
        return [key, { key, number: Number(number), type }];
      }),
    ),
  ]),
);

const EXTENSION = "x-";
const SECURITY_CASES: Record<string, [number, string]> = {
  basic: [1, "BasicAuthenticationSecurity"],
  apiKey: [2, "ApiKeySecurity"],
  "oauth2 implicit": [3, "Oauth2ImplicitSecurity"],
  "oauth2 password": [4, "Oauth2PasswordSecurity"],
  "oauth2 application": [5, "Oauth2ApplicationSecurity"],
  "oauth2 accessCode": [6, "Oauth2AccessCodeSecurity"],
};
const NON_BODY_CASES: Record<string, [number, string]> = {
  header: [1, "HeaderParameterSubSchema"],
  formData: [2, "FormDataParameterSubSchema"],
  query: [3, "QueryParameterSubSchema"],
  path: [4, "PathParameterSubSchema"],
};

class Encoder {
  private readonly skipped: (path: string) => void;

  constructor(skipped: (path: string) => void) {
    this.skipped = skipped;
  }

  /** A message from a JSON value: a table message, or one of the shapes written in code. */
  message(name: string, value: unknown, path: string): Uint8Array {
    const object = isPlainObject(value) ? value : {};
    const writer = new WireWriter();
    switch (name) {
      case "TypeItem":
        for (const type of typeof value === "string" ? [value] : strings(value)) writer.string(1, type);
        return writer.finish();
      case "ItemsItem":
        for (const [i, item] of (Array.isArray(value) ? value : [value]).entries()) {
          writer.bytes(1, this.message("Schema", item, Array.isArray(value) ? `${path}[${i}]` : path));
        }
        return writer.finish();
      case "AdditionalPropertiesItem":
        // A oneof: `false` is written too.
        if (typeof value === "boolean") return writer.uint(2, value).finish();
        return writer.bytes(1, this.message("Schema", value, path)).finish();
      case "ParametersItem":
      case "ResponseValue":
        if (typeof object.$ref === "string")
          return writer.bytes(2, this.message("JsonReference", value, path)).finish();
        return writer
          .bytes(1, this.message(name === "ParametersItem" ? "Parameter" : "Response", value, path))
          .finish();
      case "Parameter": {
        if (object.in === "body") return writer.bytes(1, this.message("BodyParameter", value, path)).finish();
        const [number, sub] = NON_BODY_CASES[String(object.in)] ?? NON_BODY_CASES.query;
        const nonBody = new WireWriter().bytes(number, this.message(sub, value, path)).finish();
        return writer.bytes(2, nonBody).finish();
      }
      case "SchemaItem":
        if (object.type === "file") return writer.bytes(2, this.message("FileSchema", value, path)).finish();
        return writer.bytes(1, this.message("Schema", value, path)).finish();
      case "SecurityDefinitionsItem": {
        const kind = object.type === "oauth2" ? `oauth2 ${String(object.flow)}` : String(object.type);
        const [number, sub] = SECURITY_CASES[kind] ?? SECURITY_CASES.apiKey;
        return writer.bytes(number, this.message(sub, value, path)).finish();
      }
      case "SecurityRequirement":
        for (const [scheme, scopes] of Object.entries(object)) {
          const list = new WireWriter();
          for (const scope of strings(scopes)) list.string(1, scope);
          writer.bytes(1, new WireWriter().string(1, scheme).bytes(2, list.finish()).finish());
        }
        return writer.finish();
      case "Paths":
        this.extensions(writer, 1, object);
        this.pairs(writer, 2, "PathItem", object, path, (key) => !key.startsWith(EXTENSION));
        return writer.finish();
      case "Responses":
        this.pairs(writer, 1, "ResponseValue", object, path, (key) => !key.startsWith(EXTENSION));
        this.extensions(writer, 2, object);
        return writer.finish();
    }
    const table = TABLES.get(name);
    if (!table) throw new Error(`openapi v2 protobuf: no message ${name}`);
    for (const key of Object.keys(object)) {
      if (!table.has(key) && !key.startsWith(EXTENSION)) this.skipped(`${path}.${key}`);
    }
    for (const field of table.values()) {
      if (field.key === EXTENSION) this.extensions(writer, field.number, object);
      else if (object[field.key] !== undefined) this.field(writer, field, object[field.key], `${path}.${field.key}`);
    }
    return writer.finish();
  }

  private field(writer: WireWriter, field: Field, value: unknown, path: string): void {
    const n = field.number;
    switch (field.type) {
      case "string":
        if (typeof value === "string" && value !== "") writer.string(n, value);
        return;
      case "bool":
        if (value === true) writer.uint(n, true);
        return;
      case "double":
        if (typeof value === "number" && value !== 0) writer.double(n, value);
        return;
      case "int64":
        if (typeof value === "number" && value !== 0) writer.uint(n, Math.trunc(value));
        return;
      case "strings":
        for (const item of strings(value)) writer.string(n, item);
        return;
      case "any":
        writer.bytes(n, anyOf(value));
        return;
      case "anys":
        for (const item of Array.isArray(value) ? value : []) writer.bytes(n, anyOf(item));
        return;
    }
    if (field.type.startsWith("[]")) {
      const name = field.type.slice(2);
      for (const [i, item] of (Array.isArray(value) ? value : []).entries()) {
        writer.bytes(n, this.message(name, item, `${path}[${i}]`));
      }
    } else if (field.type.startsWith("map:")) {
      const entries = new WireWriter();
      this.pairs(entries, 1, field.type.slice(4), isPlainObject(value) ? value : {}, path, () => true);
      writer.bytes(n, entries.finish());
    } else {
      writer.bytes(n, this.message(field.type, value, path));
    }
  }

  /** Each key of `object` that `wanted` accepts, as {1 name, 2 value} in field `number`. */
  private pairs(
    writer: WireWriter,
    number: number,
    type: string,
    object: JsonMap,
    path: string,
    wanted: (key: string) => boolean,
  ): void {
    for (const [key, value] of Object.entries(object)) {
      if (!wanted(key)) continue;
      const pair = new WireWriter().string(1, key);
      if (type === "any") pair.bytes(2, anyOf(value));
      else if (type === "string") pair.string(2, typeof value === "string" ? value : "");
      else pair.bytes(2, this.message(type, value, `${path}[${JSON.stringify(key)}]`));
      writer.bytes(number, pair.finish());
    }
  }

  /** The `x-*` keys as repeated NamedAny in field `number`. */
  private extensions(writer: WireWriter, number: number, object: JsonMap): void {
    for (const [key, value] of Object.entries(object)) {
      if (key.startsWith(EXTENSION))
        writer.bytes(number, new WireWriter().string(1, key).bytes(2, anyOf(value)).finish());
    }
  }
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
}

/** Any{2: yaml}: the value as YAML text, which JSON is. */
function anyOf(value: unknown): Uint8Array {
  return new WireWriter().string(2, `${JSON.stringify(value)}\n`).finish();
}

/** The openapi.v2.Document message of a swagger 2.0 JSON document. */
export function encodeOpenApiV2Protobuf(document: object, options: OpenApiV2ProtobufOptions = {}): Uint8Array {
  return new Encoder(options.skipped ?? (() => {})).message("Document", document, "$");
}
