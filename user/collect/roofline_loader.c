// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* --roofline's BPF on the known GEMM/GEMV entries (roofline_loader.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bpf/roof_ggml_types.h"
#include "bpf/roof_shapes.h"
#include "collect/bpf_util.h"
#include "collect/roofline_loader.h"
#include "collect/uprobes_loader.h"
#include "lib/warn.h"
#include "sym/elfsyms.h"
#include "sym/ggml_version.h"
#include "roofline.skel.h"

static const struct known {
	const char *name, *canon;	/* canon: the name reported */
	unsigned int sig, elem;
} known[] = {
	{ "cblas_sgemm", "cblas_sgemm", SIG_CBLAS_GEMM, 4 }, { "cblas_dgemm", "cblas_dgemm", SIG_CBLAS_GEMM, 8 },
	{ "cblas_sgemv", "cblas_sgemv", SIG_CBLAS_GEMV, 4 }, { "cblas_dgemv", "cblas_dgemv", SIG_CBLAS_GEMV, 8 },
	{ "sgemm_", "sgemm_", SIG_F77_GEMM, 4 },	     { "dgemm_", "dgemm_", SIG_F77_GEMM, 8 },
	{ "sgemv_", "sgemv_", SIG_F77_GEMV, 4 },	     { "dgemv_", "dgemv_", SIG_F77_GEMV, 8 },
	/* MKL's other spellings of the Fortran routines (the same ABI) */
	{ "sgemm", "sgemm_", SIG_F77_GEMM, 4 },		     { "dgemm", "dgemm_", SIG_F77_GEMM, 8 },
	{ "SGEMM", "sgemm_", SIG_F77_GEMM, 4 },		     { "DGEMM", "dgemm_", SIG_F77_GEMM, 8 },
	{ "sgemv", "sgemv_", SIG_F77_GEMV, 4 },		     { "dgemv", "dgemv_", SIG_F77_GEMV, 8 },
	{ "SGEMV", "sgemv_", SIG_F77_GEMV, 4 },		     { "DGEMV", "dgemv_", SIG_F77_GEMV, 8 },
	{ "dnnl_sgemm", "dnnl_sgemm", SIG_DNNL_GEMM, 4 },
	/* MKL's batch interfaces (OpenBLAS 0.3.21 exports none) */
	{ "cblas_sgemm_batch", "cblas_sgemm_batch", SIG_CBLAS_GEMM_BATCH, 4 },
	{ "cblas_dgemm_batch", "cblas_dgemm_batch", SIG_CBLAS_GEMM_BATCH, 8 },
	{ "cblas_sgemm_batch_strided", "cblas_sgemm_batch_strided", SIG_CBLAS_GEMM_STRIDED, 4 },
	{ "cblas_dgemm_batch_strided", "cblas_dgemm_batch_strided", SIG_CBLAS_GEMM_STRIDED, 8 },
	/* ggml's CPU backend, one call per thread of a graph node (bpf/roof_ggml.bpf.h), its version checked */
	{ "ggml_compute_forward_mul_mat", "ggml_compute_forward_mul_mat", SIG_GGML_MUL_MAT, 0 },
};

/* the repacked weights' entries, ggml::cpu::repack::tensor_traits<BLOCK, ...>::forward_mul_mat(params, op),
 * one symbol per block layout */
#define REPACK_PREFIX "_ZN4ggml3cpu6repack13tensor_traitsI"
#define REPACK_SUFFIX "E15forward_mul_matEP19ggml_compute_paramsP11ggml_tensor"
static const struct known repack = { NULL, "ggml repack forward_mul_mat", SIG_GGML_REPACK_MUL_MAT, 0 };

static const struct known *find_known(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	for (size_t i = 0; name && i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(name, known[i].name))
			return &known[i];
	if (n > strlen(REPACK_PREFIX) + strlen(REPACK_SUFFIX) && !strncmp(name, REPACK_PREFIX, strlen(REPACK_PREFIX)) &&
	    !strcmp(name + n - strlen(REPACK_SUFFIX), REPACK_SUFFIX))
		return &repack;
	return NULL;
}

static bool ggml_sig(unsigned int sig)
{
	return sig == SIG_GGML_MUL_MAT || sig == SIG_GGML_REPACK_MUL_MAT;
}

/* Are ggml's structs in the file at path (fdpath: the same, opened) those bpf/roof_ggml.bpf.h reads?
 * Else one line: no roofline for its ggml calls, the rest goes on. */
static bool ggml_verified(const char *path, const char *fdpath)
{
	char ver[32], why[400], real[PATH_MAX];

	if (realpath(fdpath, real))
		path = real;	/* --uprobe's /proc/self/fd/N: the file's name */
	if (ggml_version_read(fdpath, ver, sizeof(ver), why, sizeof(why))) {
		warn_add("--roofline: %s: ggml's version cannot be read (%s): no roofline for its matrix multiplies "
			 "(verified: ggml " ROOF_GGML_VERIFIED ")", path, why);
		return false;
	}
	if (strcmp(ver, ROOF_GGML_VERIFIED)) {
		warn_add("--roofline: %s: ggml %s, whose tensor structs are not verified (only ggml " ROOF_GGML_VERIFIED
			 "): no roofline for its matrix multiplies", path, ver);
		return false;
	}
	return true;
}

bool roofline_known(const char *name)
{
	return find_known(name) != NULL;
}

/* The known name among a symbol's names, NULL when none. */
static const struct known *sym_known(const struct elfsym *s)
{
	const struct known *k = find_known(s->name);

	for (unsigned int a = 0; !k && a < s->nr_aliases; a++)
		k = find_known(s->aliases[a]);
	return k;
}

unsigned int roofline_cover(struct roofline_prog *p, unsigned long long dev, unsigned long long ino,
			    unsigned long offset)
{
	for (int i = 0; i < p->nfns && i < (1 << 16); i++) {
		struct roofline_fn *f = &p->fns[i];

		if (f->offset == offset && p->devs[f->lib] == dev && p->inos[f->lib] == ino) {
			f->by_uprobe = true;
			return (unsigned int)ROOF_COOKIE(i, f->sig, f->elem);
		}
	}
	return 0;
}

int roofline_add_lib(struct roofline_prog *p, const char *path, char *err, size_t errlen)
{
	char fdpath[64];
	struct elfsyms es;
	struct stat st;
	int r, added = 0, fd, ggml = -1;	/* ggml: its version not checked yet (-1), refused (0), verified */

	/* opened once, read and attached through the fd: a path its owner swaps in between for a link to
	 * another file never steers a probe there (as --uprobe, user/sym/uprobe_targets.c) */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	for (int i = 0; i < p->nlibs; i++)
		if (p->devs[i] == (unsigned long long)st.st_dev && p->inos[i] == (unsigned long long)st.st_ino) {
			close(fd);
			return 0;
		}
	if (p->nlibs >= ROOFLINE_MAX_LIBS) {
		close(fd);
		err_set(err, errlen, "--roofline: more than %d libraries", ROOFLINE_MAX_LIBS);
		return -E2BIG;
	}
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	r = elfsyms_load(fdpath, &es, err, errlen);
	if (r) {
		close(fd);
		return r;
	}
	for (size_t i = 0; i < es.nr_syms; i++) {
		const struct elfsym *s = &es.syms[i];
		const struct known *k = sym_known(s);
		struct roofline_fn *f;

		if (!k || (s->flags & (ELFSYMS_F_NO_OFFSET | ELFSYMS_F_IFUNC)))
			continue;
		if (ggml_sig(k->sig) && ggml < 0)
			ggml = ggml_verified(path, fdpath);
		if (ggml_sig(k->sig) && !ggml)
			continue;
		f = realloc(p->fns, (size_t)(p->nfns + 1) * sizeof(*p->fns));
		if (!f) {
			elfsyms_free(&es);
			close(fd);
			return -ENOMEM;
		}
		p->fns = f;
		f = &p->fns[p->nfns++];
		memset(f, 0, sizeof(*f));
		snprintf(f->name, sizeof(f->name), "%s", k->canon);
		f->lib = p->nlibs;
		f->offset = s->offset;
		f->sig = k->sig;
		f->elem = k->elem;
		added++;
	}
	elfsyms_free(&es);
	if (!added) {
		close(fd);
		return 0;
	}
	p->lib_fds[p->nlibs] = fd;
	p->link_fds[p->nlibs] = -1;
	p->devs[p->nlibs] = (unsigned long long)st.st_dev;
	p->inos[p->nlibs] = (unsigned long long)st.st_ino;
	if (!(p->paths[p->nlibs] = strdup(fdpath))) {
		close(fd);
		return -ENOMEM;
	}
	p->nlibs++;
	return added;
}

int roofline_load(struct roofline_prog *p, const struct roofline_filter *f, char *err, size_t errlen)
{
	static const struct bpf_hints hints = { .lacks = "uprobe session links (kernel 6.13)", .einval_lacks = true };
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int r;

	p->skel = roofline_bpf__open();
	if (!p->skel)
		return bpf_load_error(-errno, err, errlen, "opening the --roofline BPF object", &hints);
	p->skel->rodata->cfg_filter = f->filter;
	p->skel->rodata->cfg_main_id = f->main_id;
	p->skel->rodata->cfg_roof_windows = f->windows && f->uprobes;
	p->skel->rodata->cfg_roof_uslots = f->uprobes != NULL;
	p->uprobes = f->uprobes;
	if (f->pids_fd >= 0 &&
	    (bpf_map_get_info_by_fd(f->pids_fd, &info, &len) ||
	     bpf_map__set_max_entries(p->skel->maps.pids, info.max_entries) ||
	     bpf_map__reuse_fd(p->skel->maps.pids, f->pids_fd)))
		return bpf_load_error(-errno, err, errlen, "sharing the target filter with --roofline", &hints);
	if (f->uprobes && (r = uprobes_share_roof_maps(f->uprobes, p->skel->obj)))
		return bpf_load_error(r, err, errlen, "sharing --roofline's maps with the uprobe program", &hints);
	bpf_program__set_expected_attach_type(p->skel->progs.tmabpf_roofline, ATTACH_UPROBE_SESSION);
	r = roofline_bpf__load(p->skel);
	if (r)
		return bpf_load_error(r, err, errlen, "loading the --roofline BPF program", &hints);
	p->loaded = true;
	return 0;
}

int roofline_attach(struct roofline_prog *p, char *err, size_t errlen)
{
	int prog = bpf_program__fd(p->skel->progs.tmabpf_roofline);

	for (int l = 0; l < p->nlibs; l++) {
		unsigned long *offs = calloc((size_t)p->nfns, sizeof(*offs));
		__u64 *cookies = calloc((size_t)p->nfns, sizeof(*cookies));
		int n = 0;

		if (!offs || !cookies) {
			free(offs);
			free(cookies);
			return -ENOMEM;
		}
		for (int i = 0; i < p->nfns; i++)
			if (p->fns[i].lib == l && !p->fns[i].by_uprobe) {
				offs[n] = p->fns[i].offset;
				cookies[n++] = ROOF_COOKIE(i, p->fns[i].sig, p->fns[i].elem);
			}
		p->link_fds[l] = n ? uprobe_session_link(prog, p->paths[l], offs, cookies, n) : -1;
		free(offs);
		free(cookies);
		if (n && p->link_fds[l] < 0) {
			int e = -errno;

			err_set(err, errlen, "--roofline: attaching %d uprobes (session link) to %s: %s%s", n, p->paths[l],
				strerror(-e), e == -EINVAL ? " (uprobe session links need kernel 6.13)" : "");
			return e;
		}
	}
	return 0;
}

void roofline_detach(struct roofline_prog *p)
{
	for (int l = 0; l < p->nlibs; l++)
		if (p->link_fds[l] >= 0) {
			close(p->link_fds[l]);
			p->link_fds[l] = -1;
		}
}

static unsigned long long stat_sum(int fd, unsigned int slot)
{
	int ncpu = libbpf_num_possible_cpus();
	unsigned long long *v, s = 0;

	if (ncpu <= 0 || !(v = calloc((size_t)ncpu, sizeof(*v))))
		return 0;
	if (!bpf_map_lookup_elem(fd, &slot, v))
		for (int c = 0; c < ncpu; c++)
			s += v[c];
	free(v);
	return s;
}

/* What roofline_read gathers: the rows, their capacity; -ENOMEM once one could not be added. */
struct rows_in {
	struct roofline_prog *p;
	struct roofline_result *r;
	size_t cap;
	int err;
};

/* add into the row of key (a new one unless find finds it) */
static void row_add(struct rows_in *in, const struct roof_shape *key, const struct roof_sums *add, bool find)
{
	struct roofline_result *r = in->r;
	struct roofline_fn *f = key->fn < (unsigned int)in->p->nfns ? &in->p->fns[key->fn] : NULL;
	struct roofline_row *w = NULL;

	if (!f)
		return;
	for (size_t i = 0; find && !w && i < r->nrows; i++) {
		struct roofline_row *x = &r->rows[i];

		if (!strcmp(x->func, f->name) && x->pid == key->pid && x->m == key->m && x->n == key->n &&
		    x->k == key->k && x->flags == key->flags)
			w = x;
	}
	if (!w) {
		if (r->nrows == in->cap) {
			size_t nc = in->cap ? 2 * in->cap : 64;
			struct roofline_row *g = realloc(r->rows, nc * sizeof(*g));

			if (!g) {
				in->err = -ENOMEM;
				return;
			}
			r->rows = g;
			in->cap = nc;
		}
		w = &r->rows[r->nrows++];
		memset(w, 0, sizeof(*w));
		snprintf(w->func, sizeof(w->func), "%s", f->name);
		w->elem = f->elem;
		w->pid = key->pid;
		w->m = key->m, w->n = key->n, w->k = key->k;
		w->flags = key->flags;
	}
	w->calls += add->calls, w->wall_ns += add->wall_ns, w->flops += add->flops, w->bytes += add->bytes;
	w->weight_bytes += add->weight_bytes;
}

static void slot_row_add(void *arg, const struct roof_row *row)
{
	row_add(arg, &row->key, &row->s, true);
}

/* The roof_shapes hash (per CPU, summed), then the rows still in the --uprobe slots. */
int roofline_read(struct roofline_prog *p, struct roofline_result *r)
{
	int fd = bpf_map__fd(p->skel->maps.roof_shapes), sfd = bpf_map__fd(p->skel->maps.roof_stats);
	struct roof_shape key, next, *prev = NULL;
	int ncpu = libbpf_num_possible_cpus();
	struct roof_sums *pc = ncpu > 0 ? calloc((size_t)ncpu, sizeof(*pc)) : NULL;
	struct rows_in in = { .p = p, .r = r };

	if (!pc)
		return -ENOMEM;
	r->nrows = 0;
	while (!in.err && !bpf_map_get_next_key(fd, prev, &next)) {
		struct roof_sums s = { 0 };

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, pc))
			continue;
		for (int c = 0; c < ncpu; c++) {
			s.calls += pc[c].calls;
			s.wall_ns += pc[c].wall_ns;
			s.flops += pc[c].flops;
			s.bytes += pc[c].bytes;
			s.weight_bytes += pc[c].weight_bytes;
		}
		row_add(&in, &key, &s, false);
	}
	free(pc);
	if (p->uprobes && !in.err)
		uprobes_roof_rows(p->uprobes, slot_row_add, &in);
	if (in.err)
		return in.err;
	r->calls = stat_sum(sfd, ROOF_STAT_CALLS);
	r->unreadable = stat_sum(sfd, ROOF_STAT_UNREADABLE);
	r->nested = stat_sum(sfd, ROOF_STAT_NESTED);
	r->abandoned = stat_sum(sfd, ROOF_STAT_ABANDONED);
	r->shapes_full = stat_sum(sfd, ROOF_STAT_SHAPES_FULL);
	r->ggml_workers = stat_sum(sfd, ROOF_STAT_GGML_WORKERS);
	r->procs_full = stat_sum(sfd, ROOF_STAT_PROCS_FULL);
	r->invalid = stat_sum(sfd, ROOF_STAT_INVALID);
	r->bpf_run_ns = r->bpf_run_cnt = 0;
	prog_run_stats_add(p->skel->progs.tmabpf_roofline, (unsigned long long *)&r->bpf_run_ns,
			   (unsigned long long *)&r->bpf_run_cnt);
	return 0;
}

void roofline_free(struct roofline_prog *p)
{
	roofline_detach(p);
	roofline_bpf__destroy(p->skel);
	p->skel = NULL;
	for (int l = 0; l < p->nlibs; l++) {
		free(p->paths[l]);
		close(p->lib_fds[l]);
	}
	free(p->fns);
	memset(p, 0, sizeof(*p));
}
