// Compares two V8 heap snapshots (.heapsnapshot files, as written by node's --heapsnapshot-signal) by constructor:
// count and self size of every node type+name in each, and the groups that grew most. Used by bench/drivers/soak.mjs to
// tell live-object growth from allocator growth; also runs on its own:
//
//   node bench/drivers/heapDiff.mjs <early.heapsnapshot> <late.heapsnapshot>
import {readFileSync} from "node:fs";
import {fileURLToPath} from "node:url";

/** Count and self size per "type:name" group of one snapshot (the format is described by its own snapshot.meta). */
export function heapGroups(file) {
    const snapshot = JSON.parse(readFileSync(file, "utf8"));
    const fields = snapshot.snapshot.meta.node_fields;
    const types = snapshot.snapshot.meta.node_types[fields.indexOf("type")];
    const width = fields.length;
    const typeAt = fields.indexOf("type"), nameAt = fields.indexOf("name"), sizeAt = fields.indexOf("self_size");
    const groups = new Map();
    let total = 0;
    for (let i = 0; i < snapshot.nodes.length; i += width) {
        const type = types[snapshot.nodes[i + typeAt]];
        // strings and code are grouped by type only: their "name" is their content
        const name = type === "object" || type === "closure" || type === "native" ? snapshot.strings[snapshot.nodes[i + nameAt]] : "";
        const key = `${type}:${name.slice(0, 80)}`;
        const size = snapshot.nodes[i + sizeAt];
        total += size;
        const group = groups.get(key) ?? {count: 0, bytes: 0};
        group.count++;
        group.bytes += size;
        groups.set(key, group);
    }
    return {groups, total};
}

/** Markdown: totals of both snapshots and the 25 groups whose self size grew most. */
export function heapDiff(earlyFile, lateFile) {
    const early = heapGroups(earlyFile), late = heapGroups(lateFile);
    const keys = new Set([...early.groups.keys(), ...late.groups.keys()]);
    const rows = [...keys].map((key) => {
        const a = early.groups.get(key) ?? {count: 0, bytes: 0}, b = late.groups.get(key) ?? {count: 0, bytes: 0};
        return {key, countDelta: b.count - a.count, bytesDelta: b.bytes - a.bytes, late: b};
    }).sort((x, y) => y.bytesDelta - x.bytesDelta).slice(0, 25);
    const kib = (bytes) => (bytes / 1024).toFixed(1);
    return [
        "# Heap snapshot comparison", "",
        `Live heap (sum of self sizes): ${kib(early.total)} KiB → ${kib(late.total)} KiB (${kib(late.total - early.total)} KiB).`, "",
        "| group (type:constructor) | count Δ | self size Δ (KiB) | late count | late KiB |", "|---|---|---|---|---|",
        ...rows.map((row) => `| ${row.key.replaceAll("|", "\\|")} | ${row.countDelta} | ${kib(row.bytesDelta)} | ${row.late.count} | ${kib(row.late.bytes)} |`),
        ""
    ].join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
    const [early, late] = process.argv.slice(2);
    if (early == null || late == null) {
        console.error("usage: node bench/drivers/heapDiff.mjs <early.heapsnapshot> <late.heapsnapshot>");
        process.exit(2);
    }
    process.stdout.write(heapDiff(early, late));
}
