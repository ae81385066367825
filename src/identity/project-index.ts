// Projects as authorization reads them on every request: owner and members with their roles, kept current by a
// StoreInformer over the projects' keys (no request reads storage to decide).

import { GROUP } from "../apis/management/v1/common.ts";
import {
  DEFAULT_PROJECT_ROLE,
  PROJECT_ROLES,
  type Project,
  type ProjectRole,
} from "../apis/management/v1/project-schema.ts";
import type { InformerHandler } from "../auth/store-informer.ts";
import type { StoredRecord, WatchEvent } from "../storage/types.ts";

export interface ProjectMemberEntry {
  kind: "User" | "Team";
  name: string;
  role: ProjectRole;
}

export interface ProjectEntry {
  name: string;
  owner?: { user?: string; team?: string };
  members: ProjectMemberEntry[];
}

const PREFIX = `/${GROUP}/projects/`;

function roleOf(value: unknown): ProjectRole {
  return (PROJECT_ROLES as readonly unknown[]).includes(value) ? (value as ProjectRole) : DEFAULT_PROJECT_ROLE;
}

export function projectEntry(project: Project): ProjectEntry {
  const spec = project.spec ?? {};
  return {
    name: project.metadata.name ?? "",
    owner: spec.owner && (spec.owner.user || spec.owner.team) ? spec.owner : undefined,
    members: (spec.members ?? [])
      .filter((member) => typeof member?.name === "string" && member.name)
      .map((member) => ({
        kind: member.kind === "Team" ? "Team" : "User",
        name: member.name,
        role: roleOf(member.clusterRole),
      })),
  };
}

export class ProjectIndex implements InformerHandler {
  readonly prefixes = [PREFIX];
  private readonly projects = new Map<string, ProjectEntry>();

  project(name: string): ProjectEntry | undefined {
    return this.projects.get(name);
  }

  names(): IterableIterator<string> {
    return this.projects.keys();
  }

  reset(records: StoredRecord[]): void {
    this.projects.clear();
    for (const record of records) this.put(record.value);
  }

  apply(event: WatchEvent): void {
    if (event.type === "delete") {
      this.projects.delete((JSON.parse(event.record.value) as Project).metadata?.name ?? "");
    } else {
      this.put(event.record.value);
    }
  }

  private put(value: string): void {
    const project = JSON.parse(value) as Project;
    if (project.metadata?.name) this.projects.set(project.metadata.name, projectEntry(project));
  }
}
