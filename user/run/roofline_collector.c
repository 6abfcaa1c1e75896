// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * --roofline: which libraries are probed, the host's roofs, and the result
 * handed to the report.  The libraries: those the run's --uprobe specs name,
 * and the BLAS and oneDNN libraries, by name, that the target maps (-p) or
 * that the dynamic linker finds (-- COMMAND, -a); every known GEMM/GEMV
 * entry they export is probed (collect/roofline_loader.h).  A function of
 * --uprobe without a known signature gets no roofline, said in one line.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "bpf/roof_shapes.h"
#include "collect/roofline_loader.h"
#include "collect/threads_loader.h"
#include "lib/outfile.h"
#include "lib/warn.h"
#include "output/roofline_svg.h"
#include "run/roofline_collector.h"
#include "sym/libresolve.h"

/* the libraries looked for by name, beside those --uprobe names */
static const char *const blas_libs[] = {
	"libopenblas.so.0", "libblas.so.3", "libcblas.so.3", "libmkl_rt.so.2", "libmkl_rt.so", "libdnnl.so.3",
	"libdnnl.so.2",
};

struct roofline_run {
	struct roofline_prog prog;
	struct roofline_result res;
	struct outfile svg;		/* --roofline=FILE.svg, opened before the run */
};

static bool roofline_wanted(const struct run_ctx *c)
{
	return c->o->roofline && !c->o->dry_run;
}

/* A library that cannot be read (gone, not a regular file or ELF, not ours to read) is said in one
 * line and the others go on; any other failure fails the run. */
static int add_lib(struct roofline_run *r, const char *path, char *err, size_t errlen)
{
	int n;

	err[0] = 0;
	n = roofline_add_lib(&r->prog, path, err, errlen);
	if (n != -ENOENT && n != -EINVAL && n != -EACCES)
		return n < 0 ? n : 0;
	warn_add("--roofline: %s: %s; its GEMM/GEMV calls are not measured", path, err[0] ? err : strerror(-n));
	return 0;
}

/* --uprobe's functions that have no known signature: one line naming the first few. */
static void say_unknown(const struct uprobe_set *s)
{
	char names[256] = "";
	size_t len = 0;
	int n = 0;

	for (int i = 0; i < s->nr_funcs; i++) {
		if (roofline_known(s->funcs[i].symbol))
			continue;
		if (n++ < 3 && len < sizeof(names))
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", len ? ", " : "",
						s->funcs[i].symbol);
	}
	if (n)
		warn_add("--roofline: %d probed function%s without a known GEMM/GEMV signature, no roofline for %s: %s%s",
			 n, n > 1 ? "s" : "", n > 1 ? "them" : "it", names, n > 3 ? ", ..." : "");
}

static void load_roofs(struct roofline_result *res, const char *path)
{
	struct roof_host now;
	char err[400];
	int e;

	snprintf(res->roofs_path, sizeof(res->roofs_path), "%s", path);
	roofs_host_now(&now);
	e = roofs_load(&res->roofs, path, &now, err, sizeof(err));
	res->have_roofs = e == 0;
	if (e == -ENOENT)
		snprintf(res->roofs_note, sizeof(res->roofs_note),
			 "no measured roofs for this host (%s): run 'sudo tmabpf roofs'; FLOPs, bytes and rates are "
			 "still reported", path);
	else if (e)
		snprintf(res->roofs_note, sizeof(res->roofs_note), "%s; FLOPs, bytes and rates are still reported", err);
	if (e)
		warn_add("--roofline: %s", res->roofs_note);
}

/* The chart's file is opened before the run: a bad path fails before anything is loaded. */
static int roofline_init(struct run_ctx *c, void **self, char *err, size_t errlen)
{
	struct roofline_run *r = calloc(1, sizeof(*r));

	if (!r) {
		err_set(err, errlen, "out of memory");
		return RUN_FAILED;
	}
	*self = r;
	if (c->o->roofline_svg && outfile_open(&r->svg, "--roofline", c->o->roofline_svg, OUTFILE_AT_END, c->o->out_mode,
					       err, errlen))
		return RUN_BAD_INPUT;
	return RUN_OK;
}

static int roofline_load_op(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	struct roofline_run *r = self;
	struct threads_prog *spine = c->links.spine;
	struct uprobe_set *uset = c->links.uset;
	struct roofline_filter f = { .pids_fd = threads_pids_fd(spine), .filter = spine->acfg.filter,
				     .main_id = spine->acfg.main_id, .uprobes = c->links.uprobes,
				     .windows = c->o->per_call != NULL };
	int pid = c->o->target.nr_pids ? c->o->target.pids[0] : -1, e = 0;

	for (int l = 0; uset && l < uset->nr_libs && !e; l++)
		e = add_lib(r, uset->libs[l].attach_path, err, errlen);
	for (size_t i = 0; i < sizeof(blas_libs) / sizeof(blas_libs[0]) && !e; i++) {
		struct libresolve_result lr;
		char why[512];

		if (!libresolve_find(pid, blas_libs[i], &lr, why, sizeof(why)))
			e = add_lib(r, lr.path, err, errlen);
	}
	if (e)
		return RUN_FAILED;
	if (uset)
		say_unknown(uset);
	/* the known entries --uprobe probes read their arguments in the uprobe program's own entry */
	for (int i = 0; uset && c->links.uprobes && i < uset->nr_funcs; i++) {
		const struct uprobe_func *fn = &uset->funcs[i];

		if (!fn->itt && fn->lib >= 0 && fn->lib < uset->nr_libs)
			uset->funcs[i].roof_cookie = roofline_cover(&r->prog, uset->libs[fn->lib].dev,
								     uset->libs[fn->lib].ino, fn->offset);
	}
	load_roofs(&r->res, c->o->roofs_path ? c->o->roofs_path : ROOFS_DEFAULT_PATH);
	roofline_judge(&r->res);	/* no rows yet: which roofs; the live token view's bound */
	c->rep.roofline = &r->res;
	if (!r->prog.nfns) {
		warn_add("--roofline: no library with a known GEMM/GEMV entry (cblas_sgemm, sgemm_, cblas_sgemv, "
			 "dnnl_sgemm, ...) found: name one with --uprobe LIB:GLOB; no roofline");
		return RUN_OK;
	}
	return roofline_load(&r->prog, &f, err, errlen) ? RUN_FAILED : RUN_OK;
}

static int roofline_attach_op(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	struct roofline_run *r = self;

	return r->prog.loaded && roofline_attach(&r->prog, err, errlen) ? RUN_FAILED : RUN_OK;
}

static void roofline_detach_op(struct run_ctx *c, void *self)
{
	struct roofline_run *r = self;

	roofline_detach(&r->prog);
}

static int roofline_finish(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	struct roofline_run *r = self;

	if (r->prog.loaded && roofline_read(&r->prog, &r->res))
		warn_add("--roofline: out of memory reading the shapes");
	roofline_judge(&r->res);
	if (r->res.unreadable && r->res.invalid)
		warn_add("--roofline: %llu calls with unreadable arguments or dimensions <= 0 or above %u (%llu of them "
			 "with arguments BLAS rejects, computing nothing: a leading dimension, layout, transpose or "
			 "increment out of range): not counted", (unsigned long long)r->res.unreadable, ROOF_MAX_DIM,
			 (unsigned long long)r->res.invalid);
	else if (r->res.unreadable)
		warn_add("--roofline: %llu calls with unreadable arguments or dimensions <= 0 or above %u: not counted",
			 (unsigned long long)r->res.unreadable, ROOF_MAX_DIM);
	if (r->res.procs_full)
		warn_add("--roofline: %llu calls of processes past %d at once not added to their process' totals: "
			 "those processes' per-token windows have unknown work (left out)",
			 (unsigned long long)r->res.procs_full, ROOF_MAX_PROCS);
	if (r->res.shapes_full)
		warn_add("--roofline: %llu calls not summed: more than %d shapes", (unsigned long long)r->res.shapes_full,
			 ROOF_MAX_SHAPES);
	c->rep.roofline = &r->res;
	if (outfile_is_open(&r->svg)) {
		roofline_svg_write(&r->res, r->svg.f);
		if (outfile_commit(&r->svg, err, errlen))
			return RUN_FAILED;
	}
	return RUN_OK;
}

static void roofline_free_op(struct run_ctx *c, void *self)
{
	struct roofline_run *r = self;

	outfile_abort(&r->svg);
	roofline_free(&r->prog);
	roofline_result_free(&r->res);
	free(r);
	c->rep.roofline = NULL;
}

const struct collector roofline_collector = {
	.name = "roofline", .wanted = roofline_wanted, .init = roofline_init, .load = roofline_load_op, .attach = roofline_attach_op,
	.detach = roofline_detach_op, .finish = roofline_finish, .free = roofline_free_op,
};
