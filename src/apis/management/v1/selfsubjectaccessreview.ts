// SelfSubjectAccessReview in management.platform.sh/v1: the one implementation in
// ../../authorization/v1/selfsubjectaccessreview.ts, served in the platform's group.

import { createSelfSubjectAccessReviewDefinition } from "../../authorization/v1/selfsubjectaccessreview.ts";
import { GROUP, VERSION } from "./common.ts";

export const selfSubjectAccessReviewDefinition = createSelfSubjectAccessReviewDefinition({
  group: GROUP,
  version: VERSION,
});
