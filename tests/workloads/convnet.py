# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""convnet: a two-convolution PyTorch model (random weights, no download) run N times, for --itt
(tests/test_itt.py): on CPU each torch convolution runs oneDNN primitives (Debian's python3-torch
uses the system libdnnl).

    python3 convnet.py N
"""
import sys

import torch


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    torch.manual_seed(0)
    torch.set_num_threads(2)
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(),
                            torch.nn.Conv2d(16, 16, 3, padding=1)).eval()
    x = torch.randn(1, 3, 64, 64)
    with torch.no_grad():
        for _ in range(n):
            y = m(x)
    print(float(y.sum()))


if __name__ == "__main__":
    main()
