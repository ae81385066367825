// Test support: the protobuf writer for hand-built fixtures, a table-driven encoder (JSON object -> message
// bytes, the decoder's inverse for round trips) and the `k8s\0` envelope.

import type { JsonMap } from "../../apimachinery/types.ts";
import type { FieldSpec, MessageSpec } from "./message-schema.ts";
import { WireWriter } from "./wire-writer.ts";

export { WireWriter };

/** The request body kubectl would send: `k8s\0` + runtime.Unknown{typeMeta, raw}. */
export function envelope(apiVersion: string, kind: string, raw: Uint8Array): Buffer {
  const typeMeta = new WireWriter().string(1, apiVersion).string(2, kind).finish();
  const unknown = new WireWriter().bytes(1, typeMeta).bytes(2, raw).string(3, "").string(4, "").finish();
  return Buffer.concat([Buffer.from("k8s\0", "latin1"), unknown]);
}

function timeMessage(text: string, micro: boolean): Uint8Array {
  const millis = Date.parse(text);
  const seconds = Math.floor(millis / 1000);
  const writer = new WireWriter().uint(1, seconds);
  if (micro) writer.uint(2, Number(/\.(\d{6})Z$/.exec(text)?.[1] ?? 0) * 1000);
  return writer.finish();
}

function encodeValue(writer: WireWriter, field: FieldSpec, value: unknown): void {
  const type = field.type;
  const n = field.number;
  switch (type.kind) {
    case "scalar":
      if (type.scalar === "string") writer.string(n, value as string);
      else if (type.scalar === "bytes") writer.bytes(n, Buffer.from(value as string, "base64"));
      else writer.uint(n, value as number | boolean);
      return;
    case "message":
      writer.bytes(n, encodeMessage(value as JsonMap, type.message));
      return;
    case "map":
      for (const [key, entry] of Object.entries(value as Record<string, string>)) {
        const bytes = type.value === "bytes" ? Buffer.from(entry, "base64") : Buffer.from(entry, "utf8");
        writer.bytes(n, new WireWriter().string(1, key).bytes(2, bytes).finish());
      }
      return;
    case "special":
      switch (type.special) {
        case "Time":
        case "MicroTime":
          writer.bytes(n, timeMessage(value as string, type.special === "MicroTime"));
          return;
        case "IntOrString":
          writer.bytes(
            n,
            typeof value === "string"
              ? new WireWriter().uint(1, 1).uint(2, 0).string(3, value).finish()
              : new WireWriter()
                  .uint(1, 0)
                  .uint(2, value as number)
                  .string(3, "")
                  .finish(),
          );
          return;
        case "Quantity":
          writer.bytes(n, new WireWriter().string(1, value as string).finish());
          return;
        case "RawExtension":
        case "FieldsV1":
          writer.bytes(n, new WireWriter().string(1, JSON.stringify(value)).finish());
          return;
      }
  }
}

/** Encodes a JSON object as the message `spec` (fields in table order; unknown keys ignored). */
export function encodeMessage(object: JsonMap, spec: MessageSpec): Uint8Array {
  const writer = new WireWriter();
  for (const field of spec.fields.values()) {
    const value = object[field.name];
    if (value === undefined) continue;
    if (field.repeated) for (const item of value as unknown[]) encodeValue(writer, field, item);
    else encodeValue(writer, field, value);
  }
  return writer.finish();
}
