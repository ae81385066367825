// The shape of a protobuf message as the decoder needs it, and the compact text form the tables are written in.
//
// A message is one string of fields separated by ", "; each field is `<number> <jsonName>[!] [type]`:
//   type   string (the default), bytes (base64 in JSON), bool, int32, int64, map<string> or map<bytes> (Kubernetes
//          maps: repeated {1: key, 2: value} entries), Time, MicroTime, IntOrString, Quantity, RawExtension,
//          FieldsV1, or a message: `Name` in the same package, `alias.Name` in another (see PACKAGE_ALIASES);
//          a `[]` prefix makes it repeated.
//   !      a zero value present on the wire stays in the JSON (Go pointer fields and fields without omitempty);
//          without it a zero scalar is dropped, as Go's JSON encoding of the decoded struct would drop it.

export type ScalarType = "string" | "bytes" | "bool" | "int32" | "int64";
export type SpecialType = "Time" | "MicroTime" | "IntOrString" | "Quantity" | "RawExtension" | "FieldsV1";

export type FieldType =
  | { kind: "scalar"; scalar: ScalarType }
  | { kind: "special"; special: SpecialType }
  | { kind: "map"; value: "string" | "bytes" }
  | { kind: "message"; message: MessageSpec };

export interface FieldSpec {
  number: number;
  name: string;
  repeated: boolean;
  keepZero: boolean;
  type: FieldType;
}

export interface MessageSpec {
  /** Full protobuf name, e.g. k8s.io.api.core.v1.Namespace. */
  name: string;
  fields: Map<number, FieldSpec>;
}

/** One proto package's messages in the compact form above. */
export interface MessageTable {
  package: string;
  messages: Record<string, string>;
}

export const PACKAGE_ALIASES: Record<string, string> = {
  meta: "k8s.io.apimachinery.pkg.apis.meta.v1",
  core: "k8s.io.api.core.v1",
  rbac: "k8s.io.api.rbac.v1",
  authorization: "k8s.io.api.authorization.v1",
};

const SCALARS = new Set<string>(["string", "bytes", "bool", "int32", "int64"]);
const SPECIALS = new Set<string>(["Time", "MicroTime", "IntOrString", "Quantity", "RawExtension", "FieldsV1"]);
const FIELD = /^(\d+) ([A-Za-z][A-Za-z0-9]*)(!?)(?: (\[\])?([A-Za-z][A-Za-z0-9.<>]*))?$/;

function typeOf(text: string, pkg: string, all: Map<string, MessageSpec>, where: string): FieldType {
  if (SCALARS.has(text)) return { kind: "scalar", scalar: text as ScalarType };
  if (SPECIALS.has(text)) return { kind: "special", special: text as SpecialType };
  if (text === "map<string>" || text === "map<bytes>")
    return { kind: "map", value: text === "map<string>" ? "string" : "bytes" };
  const dot = text.indexOf(".");
  const full = dot === -1 ? `${pkg}.${text}` : `${PACKAGE_ALIASES[text.slice(0, dot)]}.${text.slice(dot + 1)}`;
  const message = all.get(full);
  if (!message) throw new Error(`protobuf tables: ${where} refers to unknown message ${text}`);
  return { kind: "message", message };
}

/** Resolves the tables into linked message specs, keyed by full name. Throws on a malformed table (a bug). */
export function compileMessageTables(tables: MessageTable[]): Map<string, MessageSpec> {
  const all = new Map<string, MessageSpec>();
  for (const table of tables) {
    for (const name of Object.keys(table.messages)) {
      all.set(`${table.package}.${name}`, { name: `${table.package}.${name}`, fields: new Map() });
    }
  }
  for (const table of tables) {
    for (const [name, text] of Object.entries(table.messages)) {
      const spec = all.get(`${table.package}.${name}`)!;
      const names = new Set<string>();
      for (const item of text.split(", ")) {
        const where = `${name} field "${item}"`;
        const match = FIELD.exec(item);
        if (!match) throw new Error(`protobuf tables: cannot read ${where}`);
        const [, number, fieldName, keep, repeated, type] = match;
        if (spec.fields.has(Number(number)) || names.has(fieldName)) {
          throw new Error(`protobuf tables: ${where} is defined twice`);
        }
        names.add(fieldName);
        const fieldType = typeOf(type ?? "string", table.package, all, where);
        // Packed encoding (repeated numbers) is not implemented: no Kubernetes kind here has such a field.
        if (
          repeated &&
          (fieldType.kind === "map" ||
            (fieldType.kind === "scalar" && fieldType.scalar !== "string" && fieldType.scalar !== "bytes"))
        ) {
          throw new Error(`protobuf tables: ${where} is a repeated map or number, which the decoder does not read`);
        }
        spec.fields.set(Number(number), {
          number: Number(number),
          name: fieldName,
          repeated: repeated === "[]",
          keepZero: keep === "!",
          type: fieldType,
        });
      }
    }
  }
  return all;
}
