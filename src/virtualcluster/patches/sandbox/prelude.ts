// Source run once in every new sandbox context, before any expression. It hardens the realm and returns the
// helpers the host calls; nothing it defines is reachable from expressions except atob, btoa and virtualToHostDNS.
//
// Hardening: code generation from strings (eval, Function and its relatives) throws; Math.random throws and Date does
// not exist, so the same input always gives the same output; then everything reachable from the global object and
// from syntax (iterators, generators) is deep-frozen, so no evaluation can leave state behind for the next one.

/** Marks an error result: JSON text never starts with this character. */
export const ERROR_MARK = "\u0001";

/** Separates the results of one batch: JSON text never contains it unescaped. */
export const RESULT_SEPARATOR = "\u0002";

export const PRELUDE = String.raw`(function (hostAtob, hostBtoa, hostDNS, maxResultChars, progressBuffer) {
  "use strict";
  const G = globalThis;
  const { freeze, getPrototypeOf, getOwnPropertyDescriptor, defineProperty } = Object;
  const ownKeys = Reflect.ownKeys;
  const jsonParse = JSON.parse;
  const jsonStringify = JSON.stringify;
  const isArray = Array.isArray;
  const toText = String;
  const objectProto = Object.prototype;
  const toTag = Object.prototype.toString;
  const SetCtor = Set;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  const EvalErrorCtor = EvalError;

  const fixed = (object, key, value) => defineProperty(object, key, { value, writable: false, enumerable: false, configurable: false });

  const noCodeGeneration = function Function() {
    throw new EvalErrorCtor("code generation from strings (eval, Function) is not available in patch expressions");
  };
  const functionProto = getPrototypeOf(function () {});
  fixed(noCodeGeneration, "prototype", functionProto);
  fixed(functionProto, "constructor", noCodeGeneration);
  fixed(getPrototypeOf(function* () {}), "constructor", noCodeGeneration);
  fixed(G, "Function", noCodeGeneration);
  fixed(G, "eval", (source) => noCodeGeneration(source));

  fixed(Math, "random", function random() {
    throw new TypeErrorCtor("Math.random is not available in patch expressions: results must be deterministic");
  });
  const noDate = function Date() {
    throw new TypeErrorCtor("Date is not available in patch expressions: results must be deterministic");
  };
  fixed(noDate, "now", noDate);
  fixed(noDate, "parse", noDate);
  fixed(noDate, "UTC", noDate);
  fixed(G, "Date", noDate);

  fixed(G, "atob", function atob(data) {
    if (arguments.length === 0) throw new TypeErrorCtor("atob requires one argument");
    return jsonParse(hostAtob(jsonStringify(toText(data))));
  });
  fixed(G, "btoa", function btoa(data) {
    if (arguments.length === 0) throw new TypeErrorCtor("btoa requires one argument");
    return jsonParse(hostBtoa(jsonStringify(toText(data))));
  });
  fixed(G, "virtualToHostDNS", function virtualToHostDNS(name) {
    if (typeof name !== "string") throw new TypeErrorCtor("virtualToHostDNS expects a string; check that the value exists first");
    return jsonParse(hostDNS(jsonStringify(name)));
  });

  // Native built-ins run to completion between two interrupt checks. The slow ones get versions that check:
  // repeat and padding build strings by doubling (a loop, and ropes make it fast), and sorting without a comparator
  // gets one written in JavaScript, so every comparison is a call the interrupt handler sees.
  const MAX_STRING = 1073741823;
  const stringProto = String.prototype;
  const toLength = (value) => {
    const number = Math.trunc(+value);
    return number !== number || number < 0 ? 0 : number;
  };
  const repeatText = (text, count) => {
    if (count < 0 || count === Infinity || count !== count) throw new RangeErrorCtor("invalid repeat count");
    if (count === 0 || text.length === 0) return "";
    if (text.length * count > MAX_STRING) throw new RangeErrorCtor("invalid string length");
    let result = "";
    let piece = text;
    for (let n = count; ; ) {
      if (n % 2 === 1) result += piece;
      n = Math.floor(n / 2);
      if (n === 0) return result;
      piece += piece;
    }
  };
  const thisText = (value, name) => {
    if (value === null || value === undefined) throw new TypeErrorCtor("String.prototype." + name + " called on null or undefined");
    return toText(value);
  };
  fixed(stringProto, "repeat", {
    repeat(count) {
      return repeatText(thisText(this, "repeat"), Math.trunc(+count) || 0);
    },
  }.repeat);
  const pad = (text, maxLength, filler, atStart) => {
    const length = toLength(maxLength);
    const fill = filler === undefined ? " " : toText(filler);
    if (length <= text.length || fill === "") return text;
    const missing = length - text.length;
    const padding = repeatText(fill, Math.ceil(missing / fill.length)).slice(0, missing);
    return atStart ? padding + text : text + padding;
  };
  fixed(stringProto, "padStart", {
    padStart(maxLength) {
      return pad(thisText(this, "padStart"), maxLength, arguments[1], true);
    },
  }.padStart);
  fixed(stringProto, "padEnd", {
    padEnd(maxLength) {
      return pad(thisText(this, "padEnd"), maxLength, arguments[1], false);
    },
  }.padEnd);
  const compareAsStrings = (a, b) => {
    const x = toText(a);
    const y = toText(b);
    return x < y ? -1 : x > y ? 1 : 0;
  };
  const compareNumbers = (a, b) => {
    if (a < b) return -1;
    if (a > b) return 1;
    if (a !== a) return b !== b ? 0 : 1;
    if (b !== b) return -1;
    return a === 0 && b === 0 ? (1 / a < 1 / b ? -1 : 1 / a > 1 / b ? 1 : 0) : 0;
  };
  const withComparator = (proto, name, fallback) => {
    const native = proto[name];
    if (typeof native !== "function") return;
    fixed(proto, name, {
      [name](compare) {
        return native.call(this, compare === undefined ? fallback : compare);
      },
    }[name]);
  };
  withComparator(Array.prototype, "sort", compareAsStrings);
  withComparator(Array.prototype, "toSorted", compareAsStrings);
  const typedArrayProto = getPrototypeOf(Int8Array.prototype);
  withComparator(typedArrayProto, "sort", compareNumbers);
  withComparator(typedArrayProto, "toSorted", compareNumbers);

  const deepFreeze = (root) => {
    const stack = [root];
    const seen = new SetCtor();
    while (stack.length > 0) {
      const object = stack.pop();
      if (object === null || (typeof object !== "object" && typeof object !== "function") || seen.has(object)) continue;
      seen.add(object);
      freeze(object);
      stack.push(getPrototypeOf(object));
      for (const key of ownKeys(object)) {
        const descriptor = getOwnPropertyDescriptor(object, key);
        if ("value" in descriptor) stack.push(descriptor.value);
        else stack.push(descriptor.get, descriptor.set);
      }
    }
  };
  const generator = (function* () {})();
  deepFreeze([G, generator, [][Symbol.iterator](), new Map().entries(), new Set().values(), ""[Symbol.iterator](),
    "a".matchAll(/a/g), (function () { return arguments; })()]);

  // Inputs are JSON data: freezing them is enough to keep one evaluation from changing what the next one sees.
  const freezeData = (root) => {
    const stack = [root];
    while (stack.length > 0) {
      const value = stack.pop();
      if (value === null || typeof value !== "object") continue;
      freeze(value);
      if (isArray(value)) for (let i = 0; i < value.length; i++) stack.push(value[i]);
      else for (const key in value) stack.push(value[key]);
    }
  };
  let vclusterContext = null;
  const slots = [
    { text: "null", parsed: true, value: null },
    { text: "null", parsed: true, value: null },
    { text: "null", parsed: true, value: null },
  ];
  const slot = (index) => {
    const entry = slots[index];
    if (!entry.parsed) {
      entry.value = jsonParse(entry.text);
      freezeData(entry.value);
      entry.parsed = true;
      entry.text = "";
    }
    return entry.value;
  };
  const setInput = function (index, text) {
    slots[index] = { text, parsed: false, value: null };
    if (index === 0) vclusterContext = null;
    return "";
  };

  const where = (key) => (key === "" ? "" : " at key " + jsonStringify(toText(key)));
  const replacer = function (key, value) {
    switch (typeof value) {
      case "function":
        throw new TypeErrorCtor("the result contains a function" + where(key) + "; only JSON data can be returned");
      case "symbol":
        throw new TypeErrorCtor("the result contains a symbol" + where(key) + "; only JSON data can be returned");
      case "bigint":
        throw new TypeErrorCtor("the result contains a BigInt" + where(key) + "; only JSON data can be returned");
      case "number":
        if (value !== value || value === Infinity || value === -Infinity) {
          throw new TypeErrorCtor("the result contains " + toText(value) + where(key) + "; only finite numbers are JSON");
        }
        return value;
      case "object":
        if (value !== null && !isArray(value)) {
          const proto = getPrototypeOf(value);
          if (proto !== objectProto && proto !== null) {
            const tag = toTag.call(value);
            const what = tag === "[object Object]" ? "an object with a custom prototype" : tag;
            throw new TypeErrorCtor("the result contains " + what + where(key) + "; only plain objects and arrays are JSON");
          }
        }
        return value;
      default:
        return value;
    }
  };
  const encode = (result) => {
    if (result === undefined) return "";
    const text = typeof result === "string" ? jsonStringify(result) : jsonStringify(result, replacer);
    if (text.length > maxResultChars) throw new RangeErrorCtor("the result is larger than " + maxResultChars + " characters");
    return text;
  };
  const describe = (error) => {
    try {
      if (error !== null && typeof error === "object") {
        const text = toText(error.name) + ": " + toText(error.message);
        return text.length > 1000 ? text.slice(0, 1000) + "..." : text;
      }
      const text = "uncaught exception: " + toText(error);
      return text.length > 1000 ? text.slice(0, 1000) + "..." : text;
    } catch (ignored) {
      return "uncaught exception that could not be described";
    }
  };
  // Evaluations run in batches (one call from the host for many matches). Before each evaluation the counter in
  // progress[0] goes up; the host reads it from WebAssembly memory in its interrupt handler to give every evaluation
  // its own CPU and memory budget.
  const progress = new Int32Array(progressBuffer);
  const expressions = [];
  const register = function (fn, contextUse) {
    expressions.push({ fn, contextUse });
    return expressions.length - 1;
  };
  const probe = function (value) {
    progress[0] = value;
    return "";
  };
  // A loop of n iterations: the host uses it to find QuickJS's interrupt counter (see interrupt-counter.ts).
  const spin = function (n) {
    for (let i = 0; i < n; i++);
    return "";
  };
  // Context use: 0 none, 1 context.vcluster only (one shared frozen object will do), 2 context.vcluster and
  // context.path, 3 anything.
  const contextFor = (contextUse, path) => {
    if (contextUse === 0) return undefined;
    if (contextUse === 1) {
      if (vclusterContext === null) vclusterContext = freeze({ vcluster: slot(0) });
      return vclusterContext;
    }
    if (contextUse === 2) return freeze({ vcluster: slot(0), path });
    return freeze({ vcluster: slot(0), hostObject: slot(1), virtualObject: slot(2), path });
  };
  // payload: JSON [[id, path, valueExists, value?], ...]; result: one text per evaluation joined by U+0002, "" for
  // removal, JSON for a value, or U+0001 and an error message (the batch stops there).
  const runBatch = function (payload) {
    const items = jsonParse(payload);
    const out = [];
    for (let i = 0; i < items.length; i++) {
      progress[0] = (progress[0] + 1) | 0;
      const item = items[i];
      const entry = expressions[item[0]];
      try {
        const use = entry.contextUse;
        const context = use === 0 ? undefined : use === 1 && vclusterContext !== null ? vclusterContext : contextFor(use, item[1]);
        const result = entry.fn(item[3], item[2], context);
        // Strings are the common result: encoded here, without a call.
        out.push(typeof result === "string" && result.length < maxResultChars >> 3 ? jsonStringify(result) : encode(result));
      } catch (error) {
        out.push("\u0001" + describe(error));
        break;
      }
    }
    return out.join("\u0002");
  };
  const makeError = (message) => new TypeErrorCtor(message);
  return freeze({ register, runBatch, probe, spin, setInput, makeError });
})`;
