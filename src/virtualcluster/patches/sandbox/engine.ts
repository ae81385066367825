import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSWASMModule, RELEASE_SYNC } from "quickjs-emscripten";

// The QuickJS WebAssembly instance shared by every sandbox in the process (sync release variant).
//
// Memory: the instance gets a WebAssembly.Memory we create, with a hard maximum, so no expression can grow the
// process beyond it; allocation beyond it fails inside QuickJS as an ordinary out-of-memory error. WebAssembly memory
// never shrinks, so after an evaluation that blew its memory budget the instance is replaced and the old memory is
// released with it.
//
// Failures: if the host's own stack overflows while QuickJS runs (V8 counts WebAssembly frames too), the exception
// unwinds through QuickJS without its cleanup and the instance can no longer be trusted. Either way `discardEngine`
// swaps in a spare instance loaded ahead of time, so recovery is synchronous; a new spare loads in the background and
// every sandbox rebuilds its runtime on the new instance when next used.
//
// Loading: the instance and its spare (about 0.2 s of CPU and 20 MiB) load with loadEngine(), which whoever compiles
// expressions awaits first (loadSettings() does, for settings whose patches have any); a virtual cluster whose
// patches have no expression never loads them.

/** Hard ceiling of one instance's heap: every sandbox's compiled code plus one running evaluation. */
export const ENGINE_MAX_HEAP_BYTES = 512 * 1024 * 1024;
const PAGE = 64 * 1024;
/** The instance's own initial heap (its INITIAL_MEMORY). */
const INITIAL_HEAP_BYTES = 16 * 1024 * 1024;

/** The part of WebAssembly.Memory used here (the project's TypeScript lib has no DOM/WebAssembly types). */
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
const { Memory } = (
  globalThis as unknown as {
    WebAssembly: { Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory };
  }
).WebAssembly;

export interface Engine {
  readonly module: QuickJSWASMModule;
  readonly memory: WasmMemory;
  readonly generation: number;
}

type Instance = Pick<Engine, "module" | "memory">;

async function loadInstance(): Promise<Instance> {
  const memory = new Memory({ initial: INITIAL_HEAP_BYTES / PAGE, maximum: ENGINE_MAX_HEAP_BYTES / PAGE });
  const module = await newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmMemory: memory as never }));
  return { module, memory };
}

let current: Engine | undefined;
let spare: Instance | undefined;
let loading: Promise<void> | undefined;
let refilling: Promise<void> | undefined;
let unavailable = false;
const discardListeners: (() => void)[] = [];

function refillSpare(): void {
  if (spare || refilling) return;
  refilling = loadInstance()
    .then((instance) => {
      spare = instance;
    })
    .finally(() => {
      refilling = undefined;
    });
  // A failed load must not take the process down; the next discard tries again.
  refilling.catch(() => {});
}

/** Loads the shared instance and its spare, once; a failed load is tried again by the next call. */
export function loadEngine(): Promise<void> {
  loading ??= (async () => {
    const instance = await loadInstance();
    spare = await loadInstance();
    current = { ...instance, generation: 0 };
  })().catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

/** Whether loadEngine() has completed: expressions can be compiled and evaluated. */
export function engineLoaded(): boolean {
  return current !== undefined;
}

export class EngineUnavailableError extends Error {
  constructor() {
    super("the expression engine is restarting after a failure; retry shortly");
    this.name = "EngineUnavailableError";
  }
}

/** The healthy engine. Throws EngineUnavailableError while no trustworthy instance is ready. */
export function currentEngine(): Engine {
  if (!current) throw new Error("the expression engine is not loaded: await loadEngine() before compiling expressions");
  if (unavailable) {
    if (!spare) throw new EngineUnavailableError();
    current = { ...spare, generation: current.generation + 1 };
    spare = undefined;
    unavailable = false;
    refillSpare();
  }
  return current;
}

/** True while the instance of `generation` is the trusted one (never swaps instances itself). */
export function isCurrentGeneration(generation: number): boolean {
  return !unavailable && generation === current?.generation;
}

/** Called when an instance is discarded, so holders drop their references and its memory can be freed. */
export function onEngineDiscarded(listener: () => void): void {
  discardListeners.push(listener);
}

/**
 * Retires the instance of `generation`; a no-op when it was already replaced. A `corrupt` instance is never used
 * again (until a spare is ready, currentEngine throws); an instance retired to give back `memory` stays in use until
 * a spare is ready.
 */
export function discardEngine(generation: number, reason: "corrupt" | "memory" = "corrupt"): void {
  if (generation !== current?.generation || unavailable) return;
  if (reason === "memory" && !spare) {
    refillSpare();
    return;
  }
  unavailable = true;
  refillSpare();
  for (const listener of discardListeners) listener();
}

/** Resolves once a spare instance is loaded (tests and benchmarks use it to wait for recovery). */
export async function engineReady(): Promise<void> {
  while (refilling) await refilling;
}
