import { DefaultIntrinsics, type QuickJSContext, type QuickJSHandle } from "quickjs-emscripten";
import type { Engine } from "./engine.ts";
import type { SandboxLimits } from "./limits.ts";
import { PRELUDE } from "./prelude.ts";
import { progressMagic } from "./progress.ts";

/** Largest single allocation by default: bounds the time one native call can take between two interrupt checks. */
const MAX_ALLOCATION_BYTES = 4 * 1024 * 1024;

export type HelperName = "register" | "runBatch" | "probe" | "spin" | "setInput" | "makeError";

/** A hardened QuickJS context and the prelude's helpers (see prelude.ts). */
export interface Realm {
  context: QuickJSContext;
  helpers: Record<HelperName, QuickJSHandle>;
  /** The sandbox's progress counter buffer, and the random bytes it was filled with (see progress.ts). */
  progressBuffer: QuickJSHandle;
  progressMagic: Uint8Array;
}

export interface RealmOptions {
  limits: SandboxLimits;
  /** The runtime's interrupt handler: true stops the running code. */
  shouldInterrupt: () => boolean;
  /** The current implementation of the virtualToHostDNS built-in. */
  dns: () => ((name: string) => string) | undefined;
}

/**
 * Creates a context on `engine` without Date and Promise, sets the runtime's stack, allocation and interrupt
 * limits, and runs the prelude with the host built-ins. The caller arms the interrupt deadline first.
 */
export function createRealm(engine: Engine, options: RealmOptions): Realm {
  const { limits } = options;
  // A context made by the module owns its runtime (disposing the context disposes both).
  const context = engine.module.newContext({ intrinsics: { ...DefaultIntrinsics, Date: false, Promise: false } });
  const runtime = context.runtime;
  runtime.setMaxStackSize(limits.stackBytes);
  // QuickJS's malloc limit caps single allocations (this build counts only 8 bytes per allocation towards it).
  runtime.setMemoryLimit(Math.min(limits.memoryBytes, Math.max(MAX_ALLOCATION_BYTES, 2 * limits.resultBytes)));
  runtime.setInterruptHandler(options.shouldInterrupt);

  // Errors of built-ins are made by the prelude's own TypeError: the realm is frozen, so an error object made from
  // outside could not get its message (assigning it would hit the frozen Error.prototype).
  let makeError: QuickJSHandle | undefined;
  const text = (handle: QuickJSHandle | undefined) => {
    const value = handle ? context.getString(handle) : "";
    if (value.length > limits.resultBytes) throw new RangeError("the argument is too large");
    return value;
  };
  const builtin = (name: string, run: (text: string) => string) =>
    context.newFunction(name, (argument) => {
      let result: string;
      try {
        // Strings cross as JSON text: the engine's C strings would cut a raw string at its first NUL.
        result = JSON.stringify(run(JSON.parse(text(argument))));
      } catch (error) {
        const reason = (error as Error)?.message ?? String(error);
        // Our own helpers already name themselves; the prefix is said once.
        const message = context.newString(reason.startsWith(`${name}: `) ? reason : `${name}: ${reason}`);
        const thrown = context.callFunction(makeError ?? context.undefined, context.undefined, message);
        message.dispose();
        return { error: thrown.error ?? thrown.value };
      }
      return context.newString(result);
    });
  const magic = progressMagic();
  const progressBuffer = context.newArrayBuffer(magic.buffer as ArrayBuffer);
  const setupArguments = [
    builtin("atob", (data) => atob(data)),
    builtin("btoa", (data) => btoa(data)),
    builtin("virtualToHostDNS", (name) => {
      const dns = options.dns();
      if (!dns) throw new Error("not available: no virtual cluster is set");
      return dns(name);
    }),
    context.newNumber(limits.resultBytes),
    progressBuffer,
  ];
  const setup = context.unwrapResult(context.evalCode(PRELUDE, "prelude.js", { type: "global", strict: true }));
  const exported = context.unwrapResult(context.callFunction(setup, context.undefined, ...setupArguments));
  const names: HelperName[] = ["register", "runBatch", "probe", "spin", "setInput", "makeError"];
  const helpers = Object.fromEntries(names.map((name) => [name, context.getProp(exported, name)])) as Realm["helpers"];
  makeError = helpers.makeError;
  for (const handle of [setup, exported, ...setupArguments]) if (handle !== progressBuffer) handle.dispose();
  return { context, helpers, progressBuffer, progressMagic: magic };
}
