import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { parse } from "yaml";
import { cellText, formatData, renderTable, type ServerTable, withoutManagedFields } from "./output.ts";

const table: ServerTable = {
  columnDefinitions: [
    { name: "Name", type: "string" },
    { name: "Display Name", type: "string" },
    { name: "Members", type: "integer" },
    { name: "Cluster", type: "string", priority: 1 },
    { name: "Age", type: "string" },
  ],
  rows: [
    {
      cells: ["default", "Default Project", 0, "c1", "5m"],
      object: { metadata: { name: "default", namespace: "p-a" } },
    },
    { cells: ["web-team", "", 12, "", "2d"], object: { metadata: { name: "web-team", namespace: "p-b" } } },
  ],
};

describe("renderTable()", () => {
  it("renderTable() prints the server's columns upper-cased, aligned three spaces apart, without priority > 0", () => {
    assert.equal(
      renderTable(table),
      [
        "NAME       DISPLAY NAME      MEMBERS   AGE",
        "default    Default Project   0         5m",
        "web-team                     12        2d",
        "",
      ].join("\n"),
    );
  });

  it("renderTable() adds priority columns with wide and a NAMESPACE column from the row objects", () => {
    const text = renderTable(table, { wide: true, namespaceColumn: true });
    const [header, first] = text.split("\n");
    assert.deepEqual(header.split(/\s{3,}/), ["NAMESPACE", "NAME", "DISPLAY NAME", "MEMBERS", "CLUSTER", "AGE"]);
    assert.deepEqual(first.split(/\s{3,}/), ["p-a", "default", "Default Project", "0", "c1", "5m"]);
  });

  it("renderTable() prints nothing for no rows, and decorates only the header line", () => {
    assert.equal(renderTable({ ...table, rows: [] }), "");
    const text = renderTable(table, { header: (h) => `<${h}>` });
    assert.match(text, /^<NAME .*AGE>\n/);
    assert.equal(text.split("\n")[1].includes("<"), false);
  });

  it("renderTable() has one line per row and no terminal control characters, whatever the server sends", () => {
    const cell = fc.oneof(fc.string({ unit: "binary" }), fc.integer(), fc.boolean(), fc.constant(null), fc.object());
    fc.assert(
      fc.property(fc.array(fc.array(cell, { minLength: 4, maxLength: 4 })), (rows) => {
        const text = renderTable({
          columnDefinitions: ["A", "B", "C", "D"].map((name) => ({ name })),
          rows: rows.map((cells) => ({ cells })),
        });
        if (rows.length === 0) return assert.equal(text, "");
        assert.equal(text.split("\n").length, rows.length + 2);
        // biome-ignore lint/suspicious/noControlCharactersInRegex: asserting their absence
        assert.equal(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/.test(text), false);
      }),
    );
  });

  it("cellText() writes <none> for missing values and escapes control characters", () => {
    assert.equal(cellText(undefined), "<none>");
    assert.equal(cellText(null), "<none>");
    assert.equal(cellText(false), "false");
    assert.equal(cellText({ a: 1 }), '{"a":1}');
    assert.equal(cellText("evil\u001b[2Jname\n"), "evil\\x1b[2Jname\\x0a");
  });
});

describe("formatData()", () => {
  it("formatData() prints YAML or indented JSON that parse back to the value", () => {
    const value = { kind: "UserList", items: [{ metadata: { name: "a" } }] };
    assert.deepEqual(parse(formatData(value, "yaml")), value);
    assert.deepEqual(JSON.parse(formatData(value, "json")), value);
    assert.match(formatData(value, "json"), /\n {2}"kind"/);
  });

  it("withoutManagedFields() drops metadata.managedFields of an object and of list items only", () => {
    const object = { metadata: { name: "a", managedFields: [{ manager: "x" }] }, spec: { managedFields: 1 } };
    assert.deepEqual(withoutManagedFields(object), { metadata: { name: "a" }, spec: { managedFields: 1 } });
    assert.deepEqual(withoutManagedFields({ kind: "L", items: [object] }), {
      kind: "L",
      items: [{ metadata: { name: "a" }, spec: { managedFields: 1 } }],
    });
    assert.equal(object.metadata.managedFields.length, 1);
  });
});
