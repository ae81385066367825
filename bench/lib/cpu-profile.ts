// Summary of a V8 .cpuprofile: self time by file group (our source files, each npm package, node internals,
// GC, idle) and the functions with the most self time, as Markdown tables. "time" weights each sample by the time
// since the previous one, which charges time the thread spent blocked (an fdatasync inside SQLite's COMMIT) or
// descheduled on a loaded machine to the function it was in; "samples" counts samples, closer to CPU spent.

export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number }[];
  samples: number[];
  timeDeltas: number[];
}

function groupOf(url: string, functionName: string, root: string): string {
  if (!url) return functionName.startsWith("(") ? functionName : "(native)";
  if (url.startsWith("node:")) return "node internals";
  const path = url.replace(/^file:\/\//, "");
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (pkg) return pkg[1];
  return path.startsWith(root) ? path.slice(root.length) : path;
}

export function summariseProfile(
  profile: CpuProfile,
  options: { root: string; top: number; by?: "time" | "samples" },
): string {
  const bySamples = options.by === "samples";
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const groupTime = new Map<string, number>();
  const fnTime = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i]);
    const dt = bySamples ? 1 : (profile.timeDeltas[i] ?? 0);
    if (!node) continue;
    const { url, functionName, lineNumber } = node.callFrame;
    if (functionName === "(idle)") continue;
    total += dt;
    const group = groupOf(url, functionName, options.root);
    groupTime.set(group, (groupTime.get(group) ?? 0) + dt);
    const fn = `${functionName || "(anonymous)"} ${group}:${lineNumber + 1}`;
    fnTime.set(fn, (fnTime.get(fn) ?? 0) + dt);
  }
  const pct = (t: number) => `${((100 * t) / total).toFixed(1)} %`;
  const rows = (map: Map<string, number>) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, options.top)
      .map(([name, t]) => `| ${name} | ${pct(t)} |`)
      .join("\n");
  return [
    bySamples ? `busy samples: ${total} (shares by sample count)` : `busy samples: ${(total / 1000).toFixed(0)} ms`,
    "\n| self time by file or package | share |\n|---|---|",
    rows(groupTime),
    "\n| function (self time) | share |\n|---|---|",
    rows(fnTime),
  ].join("\n");
}
