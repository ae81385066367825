// Table columns of RoleBindings and ClusterRoleBindings, as kubectl shows them.

import type { TableColumn } from "../../../registry/types.ts";
import { type BindingObject, subjectNames } from "./common.ts";

export const bindingColumns: TableColumn<BindingObject>[] = [
  {
    name: "Role",
    type: "string",
    description: "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace.",
    cell: (b) => `${b.roleRef?.kind ?? ""}/${b.roleRef?.name ?? ""}`,
  },
  {
    name: "Age",
    type: "date",
    description: "Time since the binding was created.",
    cell: (b) => b.metadata.creationTimestamp,
  },
  {
    name: "Users",
    type: "string",
    priority: 1,
    description: "Users in the binding.",
    cell: (b) => subjectNames(b, "User").join(", "),
  },
  {
    name: "Groups",
    type: "string",
    priority: 1,
    description: "Groups in the binding.",
    cell: (b) => subjectNames(b, "Group").join(", "),
  },
  {
    name: "ServiceAccounts",
    type: "string",
    priority: 1,
    description: "ServiceAccounts in the binding.",
    cell: (b) => subjectNames(b, "ServiceAccount").join(", "),
  },
];
