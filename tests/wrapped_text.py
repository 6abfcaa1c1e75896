# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""Text outputs that wrap their long lines to the width (tmabpf check, --dry-run: text_fit.c's
text_wrap) read as their parsers want them: a line with its continuation lines (indented 4 or more
past it) joined with one space."""


def joined_lines(text):
    """The lines of text, each joined with its continuation lines."""
    out, indent = [], 0
    for line in text.splitlines():
        own = len(line) - len(line.lstrip(" "))
        if out and line.strip() and own >= indent + 4:
            out[-1] += " " + line.strip()
        else:
            out.append(line)
            indent = own
    return out


def joined(text):
    """text with its wrapped lines joined."""
    return "".join(line + "\n" for line in joined_lines(text))
