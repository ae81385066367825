// The value every read shows in place of a secret of the platform config. Writing it back keeps the stored secret.
// A plain YAML scalar (no quoting needed in spec.raw) that no real secret is likely to equal.

export const REDACTED = "<redacted>";
