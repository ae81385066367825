// The Kubernetes protobuf envelope: the 4 bytes `k8s\0`, then a runtime.Unknown message
// {1: typeMeta {1: apiVersion, 2: kind}, 2: raw (the object's own message), 3: contentEncoding, 4: contentType}.

import type { JsonMap } from "../../apimachinery/types.ts";
import { decodeMessage } from "./decode-message.ts";
import type { MessageSpec } from "./message-schema.ts";
import { malformedProtobuf, WIRE_BYTES, WireReader } from "./wire-reader.ts";

const MAGIC = [0x6b, 0x38, 0x73, 0x00];

export interface Envelope {
  apiVersion: string;
  kind: string;
  /** Where the object's bytes are in the body. */
  raw: { start: number; end: number };
  contentEncoding: string;
  contentType: string;
}

function typeMeta(reader: WireReader, envelope: Envelope): void {
  const { start, end } = reader.range();
  const inner = new WireReader(reader.bytes, start, end);
  while (!inner.done()) {
    const at = inner.pos;
    const { field, wire } = inner.tag();
    if (field !== 1 && field !== 2) {
      inner.skip(wire);
    } else if (wire !== WIRE_BYTES) {
      throw malformedProtobuf(`the envelope's typeMeta has field ${field} with wire type ${wire} at byte ${at}`);
    } else if (field === 1) {
      envelope.apiVersion = inner.text();
    } else {
      envelope.kind = inner.text();
    }
  }
}

/** Reads the envelope; throws 400 when the prefix is missing or the message does not decode. */
export function decodeEnvelope(body: Uint8Array): Envelope {
  if (body.length < MAGIC.length || MAGIC.some((byte, i) => body[i] !== byte)) {
    throw malformedProtobuf('it does not start with the 4 bytes "k8s\\0"');
  }
  const envelope: Envelope = {
    apiVersion: "",
    kind: "",
    raw: { start: body.length, end: body.length },
    contentEncoding: "",
    contentType: "",
  };
  const reader = new WireReader(body, MAGIC.length);
  while (!reader.done()) {
    const at = reader.pos;
    const { field, wire } = reader.tag();
    if (field < 1 || field > 4) {
      reader.skip(wire);
      continue;
    }
    if (wire !== WIRE_BYTES) {
      throw malformedProtobuf(`the envelope has field ${field} with wire type ${wire} at byte ${at}`);
    }
    if (field === 1) typeMeta(reader, envelope);
    else if (field === 2) envelope.raw = reader.range();
    else if (field === 3) envelope.contentEncoding = reader.text();
    else envelope.contentType = reader.text();
  }
  return envelope;
}

/**
 * Decodes an enveloped object with the message `spec`: the envelope's apiVersion and kind (when set) come first,
 * then the message's fields. Unknown non-zero fields are appended to `unknown`.
 */
export function decodeEnvelopedObject(body: Uint8Array, spec: MessageSpec, unknown: string[] = []): JsonMap {
  const envelope = decodeEnvelope(body);
  if (envelope.contentEncoding !== "") {
    throw malformedProtobuf(`content encoding ${JSON.stringify(envelope.contentEncoding)} is not supported`);
  }
  if (envelope.contentType !== "" && envelope.contentType !== "application/vnd.kubernetes.protobuf") {
    throw malformedProtobuf(`the envelope holds content type ${JSON.stringify(envelope.contentType)}`);
  }
  const object: JsonMap = {};
  if (envelope.apiVersion) object.apiVersion = envelope.apiVersion;
  if (envelope.kind) object.kind = envelope.kind;
  const fields = decodeMessage(body, envelope.raw.start, envelope.raw.end, spec, unknown);
  // The message has no apiVersion/kind fields, so nothing here overwrites the envelope's.
  return Object.assign(object, fields);
}
