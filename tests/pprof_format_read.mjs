// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
// Read a gzipped pprof profile with pprof-format (the reader and writer Pyroscope's Node.js SDK
// uses, from the npm registry) and print what a profile store takes from it, as JSON: the sample
// types, each type's total, each leaf function's total per type, the label keys and the
// mappings' files and build ids (in the profile's order: the first is the main binary), the period
// type and the period.  Usage: node pprof_format_read.mjs NODE_MODULES_DIR PROFILE
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import path from "node:path";

const [modules, file] = process.argv.slice(2);
const { Profile } = createRequire(path.join(modules, "x.js"))("pprof-format");
const p = Profile.decode(gunzipSync(readFileSync(file)));
const str = (i) => p.stringTable.strings[Number(i)];
const types = p.sampleType.map((t) => `${str(t.type)}/${str(t.unit)}`);
const funcs = new Map(p.function.map((f) => [String(f.id), str(f.name)]));
const locs = new Map(p.location.map((l) => [String(l.id), l]));
const totals = types.map(() => 0);
const leaves = {};
const labels = new Set();
for (const s of p.sample) {
	const loc = locs.get(String(s.locationId[0]));
	const line = loc && loc.line.length ? loc.line[0] : null;
	const leaf = line ? funcs.get(String(line.functionId)) : "[unknown]";
	leaves[leaf] ??= types.map(() => 0);
	s.value.forEach((v, i) => { totals[i] += Number(v); leaves[leaf][i] += Number(v); });
	for (const l of s.label) labels.add(str(l.key));
}
const mappings = p.mapping.map((m) => ({ file: str(m.filename), build_id: str(m.buildId) }));
const period_type = p.periodType ? `${str(p.periodType.type)}/${str(p.periodType.unit)}` : null;
const period = Number(p.period);
console.log(JSON.stringify({ types, totals, leaves, labels: [...labels].sort(), mappings, period_type, period }));
