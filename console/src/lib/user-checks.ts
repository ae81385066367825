// Checks of a user's profile fields before a form sends them (the server checks them again).

import { type FieldErrors, missing } from "./field-errors.ts";

/** The platform's rules for a user's object name, and its password length. */
const USER_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
export const MIN_PASSWORD = 8;
const EMAIL = /^[^\s@]+@[^\s@]+$/;

/** Checks of the profile fields a form sends: messages by input id. */
export function checkProfile(fields: { username?: string; email: string; password?: string }): FieldErrors {
  const errors = fields.username === undefined ? {} : missing([["user-username", fields.username, "Username"]]);
  if (fields.username && !errors["user-username"] && !USER_NAME.test(fields.username)) {
    errors["user-username"] = 'Lower case letters, digits, "-" and ".", starting and ending with a letter or digit.';
  }
  if (fields.email && !EMAIL.test(fields.email)) errors["user-email"] = "Not an e-mail address.";
  if (fields.password && fields.password.length < MIN_PASSWORD) {
    errors["user-password"] = `At least ${MIN_PASSWORD} characters.`;
  }
  return errors;
}
