# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""The lines of 'tmabpf check' as its parsers read them: the output wraps each line's explanation to
the width, indented 6 under its text; a line here is a status line with its continuation joined."""


def check_lines(text):
    """tmabpf check's lines, each joined with its continuation lines."""
    out = []
    for line in text.splitlines():
        if line.startswith(" " * 6) and out:
            out[-1] += " " + line.strip()
        else:
            out.append(line)
    return out
