# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""--per-call windows tile: each window's compute + spin + blocked + runqueue + absent is its wall
x threads within 1 %.  A window with a torn read (a thread switched twice between the snapshot's
time and its read, or kept being written) is flagged unsure in the report: exactness is for the
others, and torn ones must stay rare, at most 1 in 1000 (1 allowed in fewer).  Used by the
tests here and by the emulated-PMU tier (tests/pmu)."""


def window_tiles(it):
    """compute + spin + blocked + runqueue + absent of a window (or of one thread in it)."""
    return it["compute_ns"] + it["spin_ns"] + it["blocked_ns"] + it["runqueue_ns"] + it["absent_ns"]


def tiling_faults(its):
    """(windows without a torn read that do not tile, as (index, wall, threads, tiles); indexes of
    the windows with torn reads)."""
    torn = [it["index"] for it in its if it["torn_reads"]]
    bad = [(it["index"], it["wall_ns"], it["threads"], window_tiles(it)) for it in its if not it["torn_reads"] and
           abs(window_tiles(it) - it["wall_ns"] * it["threads"]) > 0.01 * it["wall_ns"] * it["threads"]]
    return bad, torn


def torn_ok(its, torn):
    return len(torn) <= max(1, len(its) // 1000)


def assert_windows_tile(its):
    bad, torn = tiling_faults(its)
    assert its and not bad and torn_ok(its, torn), \
        f"{len(bad)} of {len(its)} windows do not tile: {bad[:3]}; windows with torn reads {len(torn)}: {torn[:3]}"
