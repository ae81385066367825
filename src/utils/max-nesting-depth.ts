// How deeply a request body may nest objects and lists. Every decoder checks it before anything walks the value
// (JSON, YAML, protobuf, and JSON text the server parses out of strings: the last-applied annotation, FieldsV1
// keys), and JSON patch keeps its result within it, so the recursive walks over user data (audit redaction,
// pruning, patching, field sets, merge, YAML encoding) can never run out of stack.
//
// Why 100: legitimate objects stay far below it (Kubernetes kinds nest about 15 levels, their managedFields a
// few more), and it leaves a wide stack margin for the hungriest walk. Measured from an empty stack on Node 24
// (984 KiB default stack), the depth at which each walk overflows: encoding YAML (yaml 2.9) ~590 levels, parsing
// YAML ~760, structuredClone ~1,600, server-side apply and field sets ~1,900, strategic merge patch ~2,300,
// JSON.stringify ~4,400. A stored object is at most a few levels deeper than its body (managedFields), so the
// deepest walk uses under a fifth of the stack. Kubernetes allows 10,000 for JSON; serde_json 128, protobuf 100.
export const MAX_NESTING_DEPTH = 100;
