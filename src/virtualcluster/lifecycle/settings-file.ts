// The settings file `create` applies: checked completely before anything is touched (every problem with its field
// path), and the stored copy extended where the command itself decides something (the platform section when it
// registers the virtual cluster, the project of --project), keeping the user's text, comments and order.

import { Document, isMap, parseDocument } from "yaml";
import { loadSettings, readSettingsFile, SettingsError } from "../settings/load.ts";
import type { VirtualClusterSettings } from "../settings/types.ts";
import { LifecycleError } from "./lifecycle-error.ts";

/** Checks settings text like the runtime will (schema, defaults, every patch compiled); LifecycleError otherwise. */
export async function checkSettings(text: string, label: string, namespace: string): Promise<VirtualClusterSettings> {
  try {
    const loaded = await loadSettings(text, { namespace });
    loaded.dispose();
    return loaded.settings;
  } catch (error) {
    if (error instanceof SettingsError)
      throw new LifecycleError(`${label}: invalid settings: ${error.problems.join("; ")}`);
    throw error;
  }
}

/** The settings file's text ("" without a file); a missing or unreadable file is a LifecycleError. */
export function readSettings(file: string | undefined): string {
  if (file === undefined) return "";
  try {
    return readSettingsFile(file);
  } catch (error) {
    if (error instanceof SettingsError) throw new LifecycleError(error.problems.join("; "));
    throw error;
  }
}

export interface PlatformEdits {
  /** Add `external.platform: {}` when there is no platform section (dedicated key written by `create`). */
  ensurePlatform?: boolean;
  /** Set `external.platform.project` (only where there is a platform section). */
  project?: string;
}

/** The text with the edits applied; unchanged text when there is nothing to change. */
export function editSettings(text: string, edits: PlatformEdits): string {
  if (!edits.ensurePlatform && edits.project === undefined) return text;
  const parsed = parseDocument(text);
  // An empty file (or one with only comments) has no map to add to.
  const document = isMap(parsed.contents) ? parsed : new Document({});
  if (edits.ensurePlatform && !isMap(document.getIn(["external"])))
    document.setIn(["external"], document.createNode({}));
  if (edits.ensurePlatform && !isMap(document.getIn(["external", "platform"]))) {
    document.setIn(["external", "platform"], document.createNode({}));
  }
  if (edits.project !== undefined && isMap(document.getIn(["external", "platform"]))) {
    document.setIn(["external", "platform", "project"], edits.project);
  }
  return document.toString();
}
