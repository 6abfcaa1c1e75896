// SPDX-License-Identifier: MIT
// Decode N tokens greedily with node-llama-cpp (llama.cpp on the CPU) from a GGUF model, for the
// real-stack tests.  Each decoded token is one llama_decode call: the prompt (one token) is
// evaluated in one call and each further token in one more, so llama_decode runs exactly N times.
// usage: node llama_decode.mjs MODULES_DIR MODEL.gguf N [THREADS]
// (MODULES_DIR: where node-llama-cpp was installed, scripts/install-realstacks.sh's cache)
import path from "node:path";

const [dir, model, n, threadsArg] = process.argv.slice(2);
const threads = Number(threadsArg || 1);
const { getLlama } = await import(path.join(dir, "node_modules/node-llama-cpp/dist/index.js"));
const llama = await getLlama({ gpu: false, build: "never", usePrebuiltBinaries: true, progressLogs: false,
			       logLevel: "error", maxThreads: threads });
const m = await llama.loadModel({ modelPath: model });
const ctx = await m.createContext({ contextSize: 256, batchSize: 256, threads });
const seq = ctx.getSequence();
let count = 0;
const t0 = performance.now();
for await (const token of seq.evaluate([1], { temperature: 0 })) {
	if (++count >= Number(n))
		break;
}
const secs = (performance.now() - t0) / 1000;
process.stderr.write(`llama_decode: ${count} tokens\n`);
process.stdout.write(JSON.stringify({ tokens: count, decode_s: secs, tokens_per_s: count / secs }) + "\n");
await ctx.dispose();
await m.dispose();
await llama.dispose();
