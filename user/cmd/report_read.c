// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Reading back a tmabpf JSON report (see report_read.h). */
#include <errno.h>
#include <math.h>
#include <json-c/json.h>
#include "cmd/report_read.h"

int report_read_process_counts(const char *path, const char *const *names, int n, double *out)
{
	json_object *root = json_object_from_file(path), *procs, *p, *cnt, *v;
	int r = -EINVAL;

	if (root && json_object_object_get_ex(root, "processes", &procs) &&
	    json_object_is_type(procs, json_type_array) && json_object_array_length(procs) >= 1 &&
	    (p = json_object_array_get_idx(procs, 0)) && json_object_object_get_ex(p, "counters", &cnt)) {
		for (int i = 0; i < n; i++)
			out[i] = json_object_object_get_ex(cnt, names[i], &v) ? json_object_get_double(v) : NAN;
		r = 0;
	}
	json_object_put(root);
	return r;
}
