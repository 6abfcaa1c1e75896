#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""A tiny GPT-style decoder with random weights (no download), for the real-stack tests.

usage: tinygpt.py [--layers L] [--gen G] [--dim C] [--loops N]

Each forward runs, per layer: 4 nn.Linear with bias (qkv, attention out, mlp in, mlp out:
at::_ops::addmm, through at::_ops::linear), one depthwise causal nn.Conv1d (oneDNN: one
dnnl_primitive_execute), then the LM head, a Linear without bias (at::_ops::linear, not addmm).
Decoding G tokens greedily after the prompt runs G+1 forwards, so per run:
  at::_ops::linear::call           = N (G+1)(4L+1)
  at::_ops::addmm::call            = N (G+1) 4L
  dnnl_primitive_execute            = N (G+1) L x (primitives per convolution: oneDNN reorders
                                     src, weights and dst around it: 4 on AVX-512, see DNNL_VERBOSE)
(N = --loops: the whole decode repeated, for sampling runs that need more time).
"""
import argparse
import sys

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, c, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(c)
        self.qkv = nn.Linear(c, 3 * c)
        self.proj = nn.Linear(c, c)
        self.conv = nn.Conv1d(c, c, 3, padding=2, groups=c)
        self.ln2 = nn.LayerNorm(c)
        self.fc1 = nn.Linear(c, 4 * c)
        self.fc2 = nn.Linear(4 * c, c)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / (c // self.heads) ** 0.5
        mask = torch.ones(t, t, dtype=torch.bool).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        x = x + self.proj(y)
        # causal depthwise convolution over time (oneDNN)
        x = x + self.conv(x.transpose(1, 2))[:, :, :t].transpose(1, 2)
        return x + self.fc2(torch.relu(self.fc1(self.ln2(x))).contiguous())


class TinyGPT(nn.Module):
    def __init__(self, vocab, c, layers, heads, ctx):
        super().__init__()
        self.tok = nn.Embedding(vocab, c)
        self.pos = nn.Embedding(ctx, c)
        self.blocks = nn.ModuleList(Block(c, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(c)
        self.head = nn.Linear(c, vocab, bias=False)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(t))
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--gen", type=int, default=8)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--prompt", type=int, default=4)
    ap.add_argument("--loops", type=int, default=1)
    a = ap.parse_args()
    torch.manual_seed(0)
    model = TinyGPT(vocab=256, c=a.dim, layers=a.layers, heads=4, ctx=a.prompt + a.gen + 1).eval()
    with torch.no_grad():
        for _ in range(a.loops):
            idx = torch.randint(0, 256, (1, a.prompt))
            for _ in range(a.gen + 1):
                logits = model(idx)
                nxt = logits[:, -1, :].argmax(dim=-1, keepdim=True)
                idx = torch.cat([idx, nxt], dim=1)
    print("tinygpt: %d forwards" % (a.loops * (a.gen + 1)), file=sys.stderr)


if __name__ == "__main__":
    main()
