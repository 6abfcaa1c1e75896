#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Write a tiny llama-architecture GGUF with random Q8_0 weights (no download), for the
real-stack tests: a SentencePiece-style vocabulary of <unk>, <s>, </s>, the 256 byte tokens
and a few words, and every weight matrix in Q8_0 (blocks of 32 int8 with an f16 scale).
--types gives the matrices ggml types in turn instead (q, k, v, output of attention, gate,
up, down of each layer, then the output's; token_embd stays Q8_0): f32, f16, bf16, q4_0,
q8_0, q4_K, q5_K, q6_K, each block its scales small f16s and its quants random bytes (the
K-quants need rows of a multiple of 256: --embd 256 --ff 512).

usage: gguf_random.py OUT.gguf [--layers L] [--embd E] [--ff F] [--heads H] [--seed S] [--types T,T,...]
"""
import argparse
import random
import struct

U32, I32, F32, BOOL, STRING, ARRAY = 4, 5, 6, 7, 8, 9
GGML_F32, GGML_Q8_0 = 0, 8
# ggml type id, elements per block, the block's fields: "h" an f16 scale, a number that many random bytes
BLOCKS = {
    "q4_0": (2, 32, ["h", 16]),
    "q8_0": (8, 32, ["h", 32]),
    "q4_K": (12, 256, ["h", "h", 12, 128]),
    "q5_K": (13, 256, ["h", "h", 12, 32, 128]),
    "q6_K": (14, 256, [128, 64, 16, "h"]),
}
PLAIN = {"f32": 0, "f16": 1, "bf16": 30}
ALIGN = 32


def s(x):
    b = x.encode()
    return struct.pack("<Q", len(b)) + b


def kv(key, typ, val):
    out = s(key) + struct.pack("<I", typ)
    if typ == STRING:
        return out + s(val)
    if typ == ARRAY:
        etyp, items = val
        out += struct.pack("<IQ", etyp, len(items))
        fmt = {I32: "<i", F32: "<f"}.get(etyp)
        return out + b"".join(s(i) if etyp == STRING else struct.pack(fmt, i) for i in items)
    return out + struct.pack({U32: "<I", I32: "<i", F32: "<f", BOOL: "<?"}[typ], val)


def q8_0(rng, n):
    """n values (a multiple of 32) as Q8_0 blocks: f16 scale + 32 int8."""
    out = bytearray()
    for _ in range(n // 32):
        out += struct.pack("<e", 0.02) + bytes(rng.getrandbits(8) for _ in range(32))
    return bytes(out)


def f32(rng, n):
    return struct.pack("<%df" % n, *(1.0 + 0.01 * rng.random() for _ in range(n)))


def weights(rng, n, typ):
    """n values of ggml type typ (a name of BLOCKS or PLAIN): (type id, bytes)."""
    if typ in PLAIN:
        vals = [0.02 * (rng.random() - 0.5) for _ in range(n)]
        if typ == "f32":
            return 0, struct.pack("<%df" % n, *vals)
        if typ == "f16":
            return 1, struct.pack("<%de" % n, *vals)
        return 30, b"".join(struct.pack("<f", v)[2:] for v in vals)  # bf16: the f32's upper half
    tid, per, fields = BLOCKS[typ]
    out = bytearray()
    for _ in range(n // per):
        for f in fields:
            out += struct.pack("<e", 0.001) if f == "h" else bytes(rng.getrandbits(8) for _ in range(f))
    return tid, bytes(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--embd", type=int, default=128)
    ap.add_argument("--ff", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--types", default="q8_0", help="the weight matrices' types, in turn")
    a = ap.parse_args()
    mtypes = a.types.split(",")
    for t in mtypes:
        if t not in BLOCKS and t not in PLAIN:
            ap.error("unknown type %r (%s)" % (t, ", ".join(list(PLAIN) + list(BLOCKS))))
    rng = random.Random(a.seed)
    tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % i for i in range(256)] + ["\u2581w%d" % i for i in range(61)]
    types = [2, 3, 3] + [6] * 256 + [1] * 61
    vocab = len(tokens)
    meta = [
        kv("general.architecture", STRING, "llama"),
        kv("general.name", STRING, "tmabpf-random"),
        kv("general.alignment", U32, ALIGN),
        kv("llama.context_length", U32, 512),
        kv("llama.embedding_length", U32, a.embd),
        kv("llama.block_count", U32, a.layers),
        kv("llama.feed_forward_length", U32, a.ff),
        kv("llama.rope.dimension_count", U32, a.embd // a.heads),
        kv("llama.attention.head_count", U32, a.heads),
        kv("llama.attention.head_count_kv", U32, a.heads),
        kv("llama.attention.layer_norm_rms_epsilon", F32, 1e-5),
        kv("tokenizer.ggml.model", STRING, "llama"),
        kv("tokenizer.ggml.tokens", ARRAY, (STRING, tokens)),
        kv("tokenizer.ggml.scores", ARRAY, (F32, [0.0] * vocab)),
        kv("tokenizer.ggml.token_type", ARRAY, (I32, types)),
        kv("tokenizer.ggml.bos_token_id", U32, 1),
        kv("tokenizer.ggml.eos_token_id", U32, 2),
        kv("tokenizer.ggml.unknown_token_id", U32, 0),
    ]
    e, ff = a.embd, a.ff
    turn = iter(range(1 << 30))

    def mt():
        return mtypes[next(turn) % len(mtypes)]

    tensors = [("token_embd.weight", [e, vocab], "q8_0")]
    for i in range(a.layers):
        p = "blk.%d." % i
        tensors += [(p + "attn_norm.weight", [e], None), (p + "attn_q.weight", [e, e], mt()),
                    (p + "attn_k.weight", [e, e], mt()), (p + "attn_v.weight", [e, e], mt()),
                    (p + "attn_output.weight", [e, e], mt()), (p + "ffn_norm.weight", [e], None),
                    (p + "ffn_gate.weight", [e, ff], mt()), (p + "ffn_up.weight", [e, ff], mt()),
                    (p + "ffn_down.weight", [ff, e], mt())]
    tensors += [("output_norm.weight", [e], None), ("output.weight", [e, vocab], mt())]
    infos, blobs, off = b"", [], 0
    for name, dims, mtype in tensors:
        n = 1
        for d in dims:
            n *= d
        if mtype is None:
            typ, data = GGML_F32, f32(rng, n)
        elif mtype == "q8_0":
            typ, data = GGML_Q8_0, q8_0(rng, n)  # as before --types: the same bytes for a seed
        else:
            typ, data = weights(rng, n, mtype)
        infos += s(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        infos += struct.pack("<IQ", typ, off)
        pad = (-len(data)) % ALIGN
        blobs.append(data + b"\0" * pad)
        off += len(data) + pad
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(meta)) + b"".join(meta) + infos
    head += b"\0" * ((-len(head)) % ALIGN)
    with open(a.out, "wb") as f:
        f.write(head)
        for b in blobs:
            f.write(b)


if __name__ == "__main__":
    main()
