/** Per-evaluation limits of the expression sandbox. */
export interface SandboxLimits {
  /** CPU-time budget of one evaluation (the process's CPU clock), enforced by QuickJS's interrupt handler. */
  cpuTimeMs: number;
  /**
   * Memory of one evaluation: the engine's WebAssembly heap may not grow by more during the evaluation (checked by
   * the interrupt handler). Single allocations are capped at min(memoryBytes, max(4 MiB, 2 × resultBytes)) through
   * QuickJS's malloc limit, which this QuickJS build accounts at 8 bytes per allocation, so that cap also bounds the
   * number of live allocations (to cap / 8).
   */
  memoryBytes: number;
  /**
   * QuickJS's own stack limit. Kept small on purpose: WebAssembly frames also consume the host's native stack, and
   * QuickJS must stop first (32 KiB allows ~160 nested JavaScript calls and ~1,900 nested JSON levels).
   */
  stackBytes: number;
  /** Largest JSON text an expression may return. */
  resultBytes: number;
}

export const DEFAULT_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  cpuTimeMs: 100,
  memoryBytes: 32 * 1024 * 1024,
  stackBytes: 32 * 1024,
  resultBytes: 3 * 1024 * 1024,
});

export function resolveLimits(limits: Partial<SandboxLimits> = {}): SandboxLimits {
  const resolved = { ...DEFAULT_LIMITS, ...limits };
  for (const [name, value] of Object.entries(resolved)) {
    if (!Number.isFinite(value) || value <= 0) throw new RangeError(`sandbox limit ${name} must be a positive number`);
  }
  return resolved;
}
