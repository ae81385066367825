// Password changes through `users/<name>/password`: checks the current password when a user changes its own
// (throttled like logins), ends the user's sessions by raising its session generation first (so a failure half-way
// only logs the user out): Login keys, console sessions and the OpenID provider's refresh tokens issued before stop
// working. Then stores the new hash. Keys of type User and endpoint tokens are left alone on purpose (raising
// spec.tokenGeneration ends those too).

import { errors } from "../apimachinery/errors.ts";
import type { PasswordService } from "../apis/management/v1/user-password.ts";
import type { LoginThrottle } from "../auth/login-throttle.ts";
import type { PasswordStore, UserRef } from "./password-store.ts";

export interface PasswordServiceOptions {
  passwords: PasswordStore;
  throttle: LoginThrottle;
  /** Raises the user's session generation by one. */
  endSessions(user: UserRef): Promise<void>;
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
      await options.endSessions(user);
      await passwords.set(user, password);
    },
  };
}
