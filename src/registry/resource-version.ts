// The resourceVersion parameter of a list or watch.

import { errors } from "../apimachinery/errors.ts";

/** Parses a resourceVersion parameter: a non-negative integer, or a 400. */
export function parseResourceVersion(value: string): number {
  if (!/^\d{1,16}$/.test(value)) {
    throw errors.badRequest(`invalid resource version "${value}": must be a non-negative integer`);
  }
  return Number(value);
}
