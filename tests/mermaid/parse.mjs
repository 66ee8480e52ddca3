// The real Mermaid parser over files: `node parse.mjs FILE...` prints one JSON line per file,
// {"file", "ok": true, "type", "nodes": {id: label}, "edges": [[from, to, label]]} or
// {"file", "ok": false, "error"}; exit 1 when any file does not parse.
import { readFileSync } from "node:fs";
import { JSDOM } from "jsdom";

const dom = new JSDOM("<!DOCTYPE html><body></body>");
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import("mermaid");
mermaid.initialize({ startOnLoad: false, securityLevel: "strict" });
let failed = 0;
for (const file of process.argv.slice(2)) {
  const text = readFileSync(file, "utf8");
  try {
    const res = await mermaid.parse(text);
    const diagram = await mermaid.mermaidAPI.getDiagramFromText(text);
    const db = diagram.db;
    const nodes = {};
    for (const [id, v] of db.getVertices()) nodes[id] = v.text;
    const edges = db.getEdges().map((e) => [e.start, e.end, e.text]);
    console.log(JSON.stringify({ file, ok: true, type: res.diagramType, nodes, edges }));
  } catch (e) {
    failed += 1;
    console.log(JSON.stringify({ file, ok: false, error: String(e.message || e).slice(0, 500) }));
  }
}
process.exit(failed ? 1 : 0);
