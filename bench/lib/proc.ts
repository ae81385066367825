// Process facts from /proc (Linux): resident memory and CPU time of the server under test, and CPU pinning.

import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ; 100 on every mainstream Linux). */
const USER_HZ = 100;

export interface MemoryStatus {
  /** Resident set size now, KiB. */
  vmRssKiB: number;
  /** Peak resident set size, KiB. */
  vmHwmKiB: number;
}

export function memoryStatus(pid: number): MemoryStatus {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
  return { vmRssKiB: field("VmRSS"), vmHwmKiB: field("VmHWM") };
}

/** User + system CPU time the process has used so far, in milliseconds. */
export function cpuTimeMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The command name (field 2) may contain spaces: fields are counted after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1000) / USER_HZ;
}

let tasksetAvailable: boolean | undefined;

/** Pins every thread of `pid` to one CPU with taskset; false when that is not possible here. */
export function pinToCpu(pid: number, cpu: number): boolean {
  if (tasksetAvailable === false) return false;
  try {
    execFileSync("taskset", ["-a", "-cp", String(cpu), String(pid)], { stdio: "ignore" });
    tasksetAvailable = true;
    return true;
  } catch {
    tasksetAvailable = false;
    return false;
  }
}

/**
 * Sets the nice value of every thread of `pid` (Linux renices threads one by one); false when not possible here
 * (a negative value needs CAP_SYS_NICE).
 */
export function reniceAll(pid: number, nice: number): boolean {
  try {
    const threads = readdirSync(`/proc/${pid}/task`);
    execFileSync("renice", ["-n", String(nice), "-p", ...threads], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/**
 * Sets the nice value of the scheduling group `pid` belongs to, where the kernel groups processes by session
 * (CONFIG_SCHED_AUTOGROUP, /proc/<pid>/autogroup): the CPU is first shared between groups, by the groups' nice
 * values, and only then between a group's threads by theirs, so reniceAll alone does not rank a process above work
 * started from other sessions. Returns the group's previous nice value (undefined: no autogroups here, or not
 * allowed).
 */
export function reniceGroup(pid: number, nice: number): number | undefined {
  const file = `/proc/${pid}/autogroup`;
  try {
    const previous = Number(/nice (-?\d+)/.exec(readFileSync(file, "utf8"))?.[1]);
    writeFileSync(file, String(nice));
    return previous;
  } catch {
    return undefined;
  }
}

/** Busy CPU time of the whole machine so far (all CPUs, everything but idle and iowait), in milliseconds. */
export function machineBusyMs(): number {
  const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0];
  const [, ...fields] = line.trim().split(/\s+/);
  // user nice system idle iowait irq softirq steal …
  const [user, nice, system, , , irq, softirq, steal] = fields.map(Number);
  return ((user + nice + system + irq + softirq + steal) * 1000) / USER_HZ;
}

/**
 * CPU used by everything except the server, this process and `loadPids` (load generators in child processes) over
 * a period: other processes (a concurrent test run), plus kernel work not charged to a process. Construct at the
 * start, call at the end; in cores (1 = one CPU).
 */
export function otherCpuMeter(serverPid: number | undefined, loadPids: readonly number[] = []): () => number {
  const started = performance.now();
  const machine = machineBusyMs();
  const measured = [...(serverPid ? [serverPid] : []), ...loadPids];
  const cpuOf = () => measured.reduce((sum, pid) => sum + safeCpuTimeMs(pid), 0);
  const before = cpuOf();
  const self = process.cpuUsage();
  return () => {
    const seconds = (performance.now() - started) / 1000;
    const own = process.cpuUsage(self);
    const used = machineBusyMs() - machine - (cpuOf() - before) - (own.user + own.system) / 1000;
    return Math.max(0, used / 1000 / seconds);
  };
}

function safeCpuTimeMs(pid: number): number {
  try {
    return cpuTimeMs(pid);
  } catch {
    return 0;
  }
}
