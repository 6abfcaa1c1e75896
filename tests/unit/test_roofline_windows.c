// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * --per-call with --roofline, from iterations built here: each window's work
 * against the DRAM read roof (bytes per second over its wall time, one token
 * over its wall time, the roof over its bytes, the share), the last windows
 * as one (the live token view), the windows' min / median / max (an even
 * count's median is the middle two's mean), no bound without roofs or bytes,
 * and the live view's line; windows without known calls left out of the spread, of unknown work
 * out of the per-token figures.
 */
#include <errno.h>
#include <math.h>
#include <string.h>
#include "check.h"
#include "output/report_sections.h"

#define DRAM 20e9	/* bytes/s */

static bool near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fabs(b);
}

static void roofs_with_dram(struct roofline_result *r)
{
	memset(r, 0, sizeof(*r));
	r->have_roofs = true;
	r->roofs.bw[ROOF_READ][ROOF_DRAM][ROOF_ONE] = (struct roof_figure){ .valid = true, .median = DRAM };
	roofline_judge(r);	/* no all-CPU peak: the 1-thread roofs */
}

int main(void)
{
	/* a prefill then three decode steps: FLOPs, bytes, wall */
	static const unsigned long long w[4][3] = {
		{ 400000000, 44000000, 10000000 }, { 20000000, 42000000, 4000000 },
		{ 20000000, 42000000, 3000000 }, { 20000000, 42000000, 5000000 },
	};
	struct iteration v[6] = {};
	struct iterations it = { .v = v, .n = 4 };
	struct roofline_result rl, none = {};
	struct roofline_window win;
	struct roofline_spread fl, by, sh;
	struct report rep = { .roofline = &rl, .iters = &it };
	char line[256];
	size_t skipped;

	for (int k = 0; k < 4; k++) {
		v[k].wall_ns = w[k][2];
		v[k].work = (struct iter_work){ .calls = 13, .flops = w[k][0], .bytes = w[k][1] };
	}
	roofs_with_dram(&rl);

	roofline_window(&rl, &v[1], &win);
	check(win.flops == 20e6 && win.bytes == 42e6, "a window's FLOPs and bytes are its own");
	check(near(win.bytes_per_s, 42e6 / 4e-3) && near(win.tokens_per_s, 250), "achieved B/s and tokens/s over its wall");
	check(near(win.bound_tokens_per_s, DRAM / 42e6), "bound: the DRAM roof over its bytes (%g)", win.bound_tokens_per_s);
	check(near(win.share, 250 / (DRAM / 42e6)) && near(win.share, win.bytes_per_s / DRAM),
	      "share: tokens/s over the bound = B/s over the roof (%g)", win.share);

	roofline_windows(&rl, &it, 2, &win);
	check(win.flops == 20e6 && win.bytes == 42e6 && near(win.tokens_per_s, 2 / 8e-3) &&
	      near(win.bytes_per_s, 84e6 / 8e-3), "the last 2 windows as one: per token, over their walls");

	check(!roofline_windows_spread(&rl, &it, &fl, &by, &sh, &skipped), "spread of 4 windows");
	check(fl.min == 20e6 && fl.median == 20e6 && fl.max == 400e6, "FLOPs min/median/max");
	check(by.min == 42e6 && by.median == 42e6 && by.max == 44e6, "bytes min/median/max");
	check(near(sh.min, 44e6 / 10e-3 / DRAM) && near(sh.max, 42e6 / 3e-3 / DRAM) &&
	      near(sh.median, (42e6 / 5e-3 / DRAM + 42e6 / 4e-3 / DRAM) / 2),
	      "share: an even count's median is the middle two's mean (%g)", sh.median);

	check(report_roofline_live(&rep, 32, line, sizeof(line)) &&
	      !strcmp(line, "  per token: 115 MFLOP 42.5 MB 7.73 GB/s, 181.8 tok/s of 470.6 bound (38.6%)"),
	      "the live line over the 4 windows: '%s'", line);

	/* a window where no known call returned, and one of unknown work (roof_procs was full) */
	v[4].wall_ns = 1000000;
	v[5].wall_ns = 1000000;
	v[5].work.unknown = true;
	it.n = 6;
	check(!roofline_windows_spread(&rl, &it, &fl, &by, &sh, &skipped) && skipped == 2 && fl.min == 20e6 &&
	      by.min == 42e6 && near(sh.min, 44e6 / 10e-3 / DRAM),
	      "the spread leaves out the windows without known calls (%zu; FLOPs min %g)", skipped, fl.min);
	{
		struct roofline_token t;

		check(!roofline_per_token(&rl, &it, &t) && t.tokens == 5 && t.unknown == 1 &&
		      near(t.flops, 460e6 / 5) && near(t.bytes, 170e6 / 5) && near(t.tokens_per_s, 5 / 23e-3),
		      "per token: the windows' work over the known ones, the unknown left out (%zu %zu %g)", t.tokens,
		      t.unknown, t.flops);
	}
	roofline_windows(&rl, &it, 4, &win);
	check(win.flops == 0 && near(win.tokens_per_s, 1e3), "the last 2 as one: the unknown one left out");
	it.n = 4;

	none.have_roofs = false;
	roofline_judge(&none);
	roofline_window(&none, &v[1], &win);
	check(win.bound_tokens_per_s == 0 && win.share == 0 && win.bytes == 42e6, "no roofs: work, no bound");
	rep.roofline = &none;
	check(report_roofline_live(&rep, 32, line, sizeof(line)) && strstr(line, "; no roofs: tmabpf roofs") &&
	      strlen(line) <= 80,
	      "no roofs: the live line says how to measure them, within 80 columns: '%s'", line);

	v[0].work.bytes = 0;
	roofline_window(&rl, &v[0], &win);
	check(win.bound_tokens_per_s == 0 && win.share == 0, "a window without bytes has no bound");
	it.n = 0;
	check(roofline_windows_spread(&rl, &it, &fl, &by, &sh, &skipped) == -ENOENT, "no windows: -ENOENT");
	rep.roofline = &rl;
	check(!report_roofline_live(&rep, 32, line, sizeof(line)), "no windows yet: no live line");
	return check_exit();
}
