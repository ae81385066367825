// Password changes through `users/<name>/password`: checks the current password when a user changes its own
// (throttled like logins), invalidates the user's login keys by raising its tokenGeneration first (so a failure
// half-way only logs the user out), then stores the new hash. Keys of type User are left alone on purpose.

import { errors } from "../apimachinery/errors.ts";
import type { PasswordService } from "../apis/management/v1/user-password.ts";
import type { LoginThrottle } from "../auth/login-throttle.ts";
import type { PasswordStore, UserRef } from "./password-store.ts";

export interface PasswordServiceOptions {
  passwords: PasswordStore;
  throttle: LoginThrottle;
  /** Raises the user's spec.tokenGeneration by one. */
  revokeLoginKeys(user: UserRef): Promise<void>;
}

export function passwordService(options: PasswordServiceOptions): PasswordService {
  const { passwords, throttle } = options;
  return {
    async change({ user, password, current }) {
      if (current !== undefined && (await passwords.has(user))) {
        const wait = throttle.retryAfter(user.name, undefined);
        if (wait > 0) throw errors.tooManyRequests("too many failed password checks; try again later", wait);
        if (!(await passwords.verify(user, current))) {
          throttle.failed(user.name, undefined);
          throw errors.forbidden(
            { group: "management.platform.sh", resource: "users" },
            user.name,
            "the current password (spec.currentPassword) is not correct",
          );
        }
        throttle.succeeded(user.name);
      }
      await options.revokeLoginKeys(user);
      await passwords.set(user, password);
    },
  };
}
