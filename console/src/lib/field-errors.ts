// Messages about a form's fields, by input id: what the form checks before it sends anything.

export type FieldErrors = Record<string, string>;

/** The required fields among `fields` ([input id, value, label]) that are empty or blank. */
export function missing(fields: [string, string | undefined, string][]): FieldErrors {
  const errors: FieldErrors = {};
  for (const [id, value, label] of fields) if (!value?.trim()) errors[id] = `${label} is required.`;
  return errors;
}
