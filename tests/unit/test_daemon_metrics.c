// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The daemon's exposition, rendered from a synthetic aggregation (no BPF, no
 * PMU needed): one HELP/TYPE per family and its samples together, process
 * series with {cgroup, comm, pid}, the per-cgroup "[other]" series without a
 * pid, top threads, functions, TMA ratios from a TMA hook (as on a PMU host),
 * self metrics; and the JSON-lines snapshot.
 */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "daemon/daemon_metrics.h"
#include "lib/version.h"
#include "model/report.h"
#include "collect/uprobes_loader.h"

static int fake_tma(const struct thread_stats *s, struct tma_result *res)
{
	memset(res, 0, sizeof(*res));
	res->n = 3;
	snprintf(res->node[0].name, sizeof(res->node[0].name), "tma_backend_bound");
	res->node[0].value = 30.0;
	res->node[0].tma = 1;
	snprintf(res->node[1].name, sizeof(res->node[1].name), "tma_memory_bound");
	res->node[1].value = 12.5;
	res->node[1].tma = 2;
	snprintf(res->node[2].name, sizeof(res->node[2].name), "tma_info_thread_clks");
	res->node[2].value = 1e9;
	res->node[2].tma = 0;
	return 0;
}

static struct thread_stats ts(unsigned pid, unsigned tid, const char *comm, unsigned long long oncpu, unsigned long long v)
{
	struct thread_stats s = { .pid = pid, .tid = tid, .first_seen_ns = 1, .oncpu_ns = oncpu };

	snprintf(s.comm, sizeof(s.comm), "%s", comm);
	s.c[0] = (struct counter_val){ .value = v, .enabled = oncpu, .running = oncpu };
	return s;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

int main(void)
{
	struct agg a;
	struct agg_cfg cfg = { .nr_events = 1, .top_procs = 1, .top_threads = 1, .max_cgroups = 4,
			       .expire_ns = 60000000000ULL };
	struct event_list evs = { .n = 1 };
	struct host_info host = { .kernel = "6.18", .pmu = true };
	struct budget b;
	struct daemon_self self = { .budget = &b, .threads_in_map = 3, .max_threads = 16384 };
	struct uprobe_func funcs[1] = { { .symbol = "cblas_sgemm", .lib = 0 } };
	struct uprobe_set uset = { .nr_libs = 1, .nr_funcs = 1, .funcs = funcs };
	struct agg_funcs af;
	struct func_row row = { .key = { .fn = 0, .tid = 11 }, .s = { .pid = 10, .calls = 42, .wall_ns = 2000000000 } };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	snprintf(evs.ev[0].name, sizeof(evs.ev[0].name), "cycles");
	uset.libs[0].module = "/usr/lib/libopenblas.so.0";
	budget_init(&b, 1.0, 0, 1);
	daemon_agg_init(&a, &cfg);
	daemon_agg_funcs_init(&af, 1);
	daemon_agg_funcs_update(&af, &row, 1);
	struct thread_stats busy = ts(10, 10, "decoder", 900000000, 5000), side = ts(10, 11, "worker", 100000000, 100),
			    idle = ts(20, 20, "sshd", 1000000, 7);
	busy.cgroup_id = side.cgroup_id = idle.cgroup_id = 0;
	daemon_agg_begin(&a);
	daemon_agg_thread_seen(&a, &busy);
	daemon_agg_thread_seen(&a, &side);
	daemon_agg_thread_seen(&a, &idle);
	daemon_agg_end(&a, 1000000000ULL);

	struct daemon_view v = { .agg = &a, .funcs = &af, .uset = &uset, .evs = &evs, .host = &host,
				 .recipe = "skylakex", .tma_level = 2, .tma = fake_tma, .self = &self };
	f = open_memstream(&buf, &len);
	daemon_metrics_write(f, &v);
	fclose(f);

	check(count(buf, "# TYPE tmabpf_oncpu_seconds_total counter") == 1, "one TYPE line per family");
	check(strstr(buf, "tmabpf_oncpu_seconds_total{cgroup=\"\",comm=\"decoder\",pid=\"10\"} 1\n") != NULL,
	      "process series: both threads' on-CPU time, in seconds");
	check(strstr(buf, "tmabpf_oncpu_seconds_total{cgroup=\"\",comm=\"[other]\"} 0.001\n") != NULL,
	      "the process without a slot is in its cgroup's [other] series, no pid label");
	check(strstr(buf, "tmabpf_events_total{cgroup=\"\",comm=\"decoder\",pid=\"10\",event=\"cycles\"} 5100\n") != NULL,
	      "events per process");
	check(strstr(buf, "tmabpf_tma_ratio{cgroup=\"\",comm=\"decoder\",pid=\"10\",level=\"1\",node=\"tma_backend_bound\"} 0.3\n")
	      != NULL, "TMA ratio from the hook, level 1, as a ratio");
	check(strstr(buf, "level=\"2\",node=\"tma_memory_bound\"} 0.125\n") != NULL, "TMA level 2 node");
	check(!strstr(buf, "tma_info_thread_clks"), "info metrics are not TMA nodes");
	check(count(buf, "tmabpf_thread_oncpu_seconds_total{") == 1 &&
	      strstr(buf, "tmabpf_thread_oncpu_seconds_total{cgroup=\"\",comm=\"decoder\",pid=\"10\",tid=\"10\"} 0.9\n"),
	      "one top thread: the busiest");
	check(strstr(buf, "tmabpf_function_calls_total{module=\"/usr/lib/libopenblas.so.0\",symbol=\"cblas_sgemm\"} 42\n") !=
	      NULL, "function calls");
	check(strstr(buf, "tmabpf_function_wall_seconds_total{module=\"/usr/lib/libopenblas.so.0\",symbol=\"cblas_sgemm\"} 2\n")
	      != NULL, "function wall time in seconds");
	char bi[512];

	snprintf(bi, sizeof(bi), "tmabpf_build_info{version=\"%s\",kernel=\"6.18\",recipe=\"skylakex\",pmu=\"1\","
		 "accounting=\"switch\",git=\"%s\",libbpf=\"%s\",bpf_arch=\"%s\"} 1\n", TMABPF_VERSION, version_git(),
		 version_libbpf(), version_bpf_arch());
	check(strstr(buf, bi) != NULL, "build info");
	check(strstr(buf, "tmabpf_sampling_available 0\n") && strstr(buf, "tmabpf_overhead_budget_ratio 0.01\n"),
	      "budget and sampling state");
	check(strstr(buf, "tmabpf_series{kind=\"process\",limit=\"1\"} 1\n") != NULL, "series count and limit");
	/* every family's samples are contiguous: no metric name appears after another family started */
	bool grouped = true;
	char last[128] = "", seen[8192] = "";
	for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		char name[128];

		if (*line == '#' || sscanf(line, "%127[a-zA-Z0-9_:]", name) != 1)
			continue;
		if (strcmp(name, last)) {
			char key[140];

			snprintf(key, sizeof(key), "|%s|", name);
			if (strstr(seen, key))
				grouped = false;
			strncat(seen, key, sizeof(seen) - strlen(seen) - 1);
			snprintf(last, sizeof(last), "%s", name);
		}
	}
	check(grouped, "samples of a family are contiguous");
	free(buf);

	buf = NULL;
	f = open_memstream(&buf, &len);
	daemon_metrics_jsonl_write(f, &v, 1700000000.5);
	fclose(f);
	check(count(buf, "\n") == 1 && buf[len - 1] == '\n', "JSON lines: one line per snapshot");
	check(strstr(buf, "\"comm\":\"decoder\"") && strstr(buf, "\"oncpu_ns\":1000000000") &&
	      strstr(buf, "\"tma_backend_bound\":30") && strstr(buf, "\"calls\":42"),
	      "JSON line has the series, TMA and functions");
	free(buf);
	daemon_agg_funcs_free(&af);
	daemon_agg_free(&a);
	return check_exit();
}
