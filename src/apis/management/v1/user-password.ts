// `users/<name>/password` (POST {spec: {password, currentPassword}}): sets a user's password. Changing one's own
// password needs the current one (when one is set); whoever else may create this subresource (admins) resets it.
// Passwords are never returned; the service stores only a slow hash, where no API read reaches it.

import { errors } from "../../../apimachinery/errors.ts";
import { fieldError } from "../../../apimachinery/field-errors.ts";
import { object, string } from "../../../apimachinery/schema-builders.ts";
import { isPlainObject, type KubeObject } from "../../../apimachinery/types.ts";
import type { ActionHandler } from "../../../registry/types.ts";
import { GROUP, VERSION } from "./common.ts";

export const MIN_PASSWORD_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 1024;

export interface PasswordService {
  /**
   * Sets the password of `user`. With `current` (a user changing its own), the stored password must match it.
   * Also invalidates the user's login keys (tokenGeneration). Throws StatusErrors.
   */
  change(request: { user: { name: string; uid: string }; password: string; current?: string }): Promise<void>;
}

const KIND = "UserPassword";

export function passwordSubresource(service: PasswordService): ActionHandler {
  return {
    kind: KIND,
    description: "Sets the password of a user. Passwords are never returned.",
    schema: {
      spec: object(
        {
          password: string(`The new password (${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters).`),
          currentPassword: string("The current password; required to change one's own password."),
        },
        "The password change.",
      ),
    },
    verbs: ["create"],
    async handle({ context, body, parent }) {
      const name = parent?.metadata.name ?? "";
      const spec = isPlainObject(body) && isPlainObject(body.spec) ? body.spec : undefined;
      const password = spec?.password;
      const current = spec?.currentPassword;
      const invalid = (field: string, detail: string) =>
        errors.invalid({ group: GROUP, kind: KIND }, name, [fieldError.forbidden(field, detail)]);
      if (typeof password !== "string" || password.length < MIN_PASSWORD_LENGTH) {
        throw invalid("spec.password", `must be at least ${MIN_PASSWORD_LENGTH} characters`);
      }
      if (password.length > MAX_PASSWORD_LENGTH) {
        throw invalid("spec.password", `must be at most ${MAX_PASSWORD_LENGTH} characters`);
      }
      if (current !== undefined && typeof current !== "string")
        throw invalid("spec.currentPassword", "must be a string");
      const self = context.user.name === name;
      await service.change({
        user: { name, uid: parent?.metadata.uid ?? "" },
        password,
        current: self ? (current ?? "") : undefined,
      });
      const response: KubeObject = {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: KIND,
        metadata: { name },
        status: { changed: true },
      };
      return response;
    },
  };
}
