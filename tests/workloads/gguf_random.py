#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Write a tiny llama-architecture GGUF with random Q8_0 weights (no download), for the
real-stack tests: a SentencePiece-style vocabulary of <unk>, <s>, </s>, the 256 byte tokens
and a few words, and every weight matrix in Q8_0 (blocks of 32 int8 with an f16 scale).

usage: gguf_random.py OUT.gguf [--layers L] [--embd E] [--ff F] [--heads H] [--seed S]
"""
import argparse
import random
import struct

U32, I32, F32, BOOL, STRING, ARRAY = 4, 5, 6, 7, 8, 9
GGML_F32, GGML_Q8_0 = 0, 8
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--embd", type=int, default=128)
    ap.add_argument("--ff", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
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
    tensors = [("token_embd.weight", [e, vocab], GGML_Q8_0)]
    for i in range(a.layers):
        p = "blk.%d." % i
        tensors += [(p + "attn_norm.weight", [e], GGML_F32), (p + "attn_q.weight", [e, e], GGML_Q8_0),
                    (p + "attn_k.weight", [e, e], GGML_Q8_0), (p + "attn_v.weight", [e, e], GGML_Q8_0),
                    (p + "attn_output.weight", [e, e], GGML_Q8_0), (p + "ffn_norm.weight", [e], GGML_F32),
                    (p + "ffn_gate.weight", [e, ff], GGML_Q8_0), (p + "ffn_up.weight", [e, ff], GGML_Q8_0),
                    (p + "ffn_down.weight", [ff, e], GGML_Q8_0)]
    tensors += [("output_norm.weight", [e], GGML_F32), ("output.weight", [e, vocab], GGML_Q8_0)]
    infos, blobs, off = b"", [], 0
    for name, dims, typ in tensors:
        n = 1
        for d in dims:
            n *= d
        data = q8_0(rng, n) if typ == GGML_Q8_0 else f32(rng, n)
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
