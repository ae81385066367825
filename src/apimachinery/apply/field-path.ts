// Field paths as Kubernetes prints them in apply conflicts: `.spec.email`, `.metadata.labels.app`,
// `.spec.items[name="a"].port`, `.metadata.finalizers[="x"]`.

import type { FieldPath } from "./field-set.ts";
import { pathElement } from "./path-element.ts";

export function formatFieldPath(path: FieldPath): string {
  return path.map(pathElement.format).join("");
}
