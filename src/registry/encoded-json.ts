// A read or write result the registry hands over already encoded as compact JSON, so a JSON response is the
// stored text (plus its resourceVersion) instead of JSON.parse + presentForRead + JSON.stringify per request.
// Anything that needs the object (YAML, Table, pretty output, audit) decodes it on demand.

export class EncodedJson {
  readonly json: string;

  constructor(json: string) {
    this.json = json;
  }

  /** A fresh object every call: callers may mutate it. */
  decode(): unknown {
    return JSON.parse(this.json);
  }
}

/** The object form of a value that may be pre-encoded (audit hooks, tests). */
export function decodedValue(value: unknown): unknown {
  return value instanceof EncodedJson ? value.decode() : value;
}
