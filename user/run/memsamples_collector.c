// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* --mem-samples' collector (collect/memsamples.c): where the PMU lacks the event, said in one line
 * and the run goes on without. */
#include <stdlib.h>
#include <string.h>
#include "collect/memsamples.h"
#include "lib/warn.h"
#include "pmu/mem_event.h"
#include "run/memsamples_collector.h"

static bool mem_wanted(const struct run_ctx *c)
{
	return c->o->mem_source != NULL;
}

static int mem_init(struct run_ctx *c, void **self, char *err, size_t errlen)
{
	if (!(*self = calloc(1, sizeof(struct memsamples)))) {
		err_set(err, errlen, "out of memory");
		return RUN_FAILED;
	}
	return RUN_OK;
}

/* --dry-run: the event a run would sample. */
static void mem_preview(struct run_ctx *c, void *self, FILE *f)
{
	struct mem_event ev;
	char err[512];

	if (mem_event_choose(c->o->mem_source, c->prep->cpu, false, &ev, err, sizeof(err)))
		fprintf(f, "mem-samples: none: %s\n", err);
	else
		mem_event_print(&ev, f);
}

/* Choose the event (where the PMU lacks one, say so and carry on without) and load. */
static int mem_load(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	struct mem_event ev;
	char why[256];

	if (!strcmp(c->o->mem_source, "pmu") && !c->prep->host.pmu) {
		warn_add("--mem-samples: no precise memory sampling here (%s); skipped (fix: bare metal or a VM whose "
			 "vPMU exposes PEBS/IBS; --mem-samples=page-faults samples page-fault addresses)",
			 c->prep->host.pmu_why);
		return RUN_OK;
	}
	if (mem_event_choose(c->o->mem_source, c->prep->cpu, true, &ev, why, sizeof(why))) {
		warn_add("--mem-samples: %s; skipped", why);
		return RUN_OK;
	}
	return memsamples_load(self, &ev, c->links.spine, err, errlen) ? RUN_FAILED : RUN_OK;
}

/* An address-carrying event the PMU refuses leaves the rest of the run going; page faults cannot fail so. */
static int mem_attach(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	struct memsamples *m = self;
	char why[512];

	if (!m->loaded || !memsamples_attach(m, why, sizeof(why)))
		return RUN_OK;
	if (!strcmp(m->ev.source, "page-faults")) {
		err_set(err, errlen, "--mem-samples=page-faults: %s", why);
		return RUN_FAILED;
	}
	warn_add("--mem-samples: %s; memory samples skipped, the rest of the run goes on", why);
	memsamples_free(m);
	return RUN_OK;
}

static void mem_poll(struct run_ctx *c, void *self, int timeout_ms)
{
	struct memsamples *m = self;

	if (m->loaded)
		memsamples_poll(m);
}

static void mem_detach(struct run_ctx *c, void *self)
{
	struct memsamples *m = self;

	if (m->loaded)
		memsamples_detach(m);
}

static int mem_finish(struct run_ctx *c, void *self, char *err, size_t errlen)
{
	struct memsamples *m = self;

	if (m->loaded && memsamples_collect(m) == 0)
		c->rep.mem = &m->res;
	return RUN_OK;
}

static void mem_free(struct run_ctx *c, void *self)
{
	memsamples_free(self);
	free(self);
	c->rep.mem = NULL;
}

const struct collector mem_collector = {
	.name = "memsamples", .wanted = mem_wanted, .init = mem_init, .preview = mem_preview, .load = mem_load,
	.attach = mem_attach, .poll = mem_poll, .detach = mem_detach, .finish = mem_finish, .free = mem_free,
};
