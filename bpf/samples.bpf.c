// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Sampling (--sample): one sampling perf event per CPU (cpu-clock, or cycles
 * on hosts with a PMU) runs tmabpf_sample.  A sample of a tracked thread is an
 * accounting point like a switch (account.bpf.h): the counter delta since this
 * CPU's previous accounting point is folded into the thread.  The row of
 * (thread, user stack, kernel stack) gets a count of one and the thread's
 * counter delta since that thread's previous sample (sample_bases), whatever
 * accounting points fell in between (switches, uprobe hits): an estimate of
 * the counts spent in the sampled code, and a thread's rows add up to its sums
 * at its last sample (its first sample takes all since it was tracked).  The leaf function,
 * the first frame of the kernel stack or else of the user stack, is resolved
 * in user space.
 *
 * Stacks are kept under a 64-bit hash of their frames in a plain hash map,
 * not in a BPF_MAP_TYPE_STACK_TRACE: that map indexes buckets with a 32-bit
 * hash and refuses (or, with BPF_F_REUSE_STACKID, overwrites) a colliding
 * stack, which loses whole stacks for good once a few thousand exist.
 *
 * Each new row is sent to user space, which names its user stack at once,
 * while the process lives and maps what it mapped at the sample (maps are
 * read when a process is first met, again when an address is missing from
 * them, and dropped at exec), so that frames stay named after the process
 * exits.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "account.bpf.h"
#include "sample_rows.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* A thread's sums at its previous sample.  LRU, twice --max-threads: exited threads' entries go
 * first; a live thread's would go only after that many other threads were sampled since its
 * last sample (its next sample would then count its sums since it was tracked again). */
struct sample_base {
	__u64 first_seen_ns;	/* the thread's (tid reuse: another thread) */
	struct counter_val c[TMABPF_MAX_EVENTS];
};

PERCPU_VAR(sample_base_zero, struct sample_base);	/* insert template of sample_bases, never written */

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);	/* 2 x --max-threads */
	__type(key, __u32);
	__type(value, struct sample_base);
} sample_bases SEC(".maps");

/* The row's counters: t's sums since its previous sample (t folded just now); at its first
 * sample (or the first of a new thread with a reused tid), all its sums since it was tracked. */
static __always_inline void add_since_last_sample(struct sample_stats *s, const struct thread_stats *t)
{
	struct sample_base *b = bpf_map_lookup_elem(&sample_bases, &t->tid);
	__u32 zero = 0;

	if (!b || b->first_seen_ns != t->first_seen_ns) {
		struct sample_base *tmpl = bpf_map_lookup_elem(&sample_base_zero, &zero);

		if (!tmpl || bpf_map_update_elem(&sample_bases, &t->tid, tmpl, BPF_ANY))
			return;
		b = bpf_map_lookup_elem(&sample_bases, &t->tid);
		if (!b)
			return;
		b->first_seen_ns = t->first_seen_ns;
	}
	for (__u32 e = 0; e < TMABPF_MAX_EVENTS; e++) {
		if (e >= account_cfg.nr_events)
			break;
		struct counter_val d;

		cv_diff(&d, &t->c[e], &b->c[e]);
		cv_add(&s->c[e], &d);
		b->c[e] = t->c[e];
	}
}

/* Standalone (the daemon's task accounting, no spine), or beside --sample-events
 * (which writes the rows' counters): samples only, no
 * thread records and no counter deltas. */
const volatile bool cfg_no_account = false;

/* --per-call: each sample into percall_samples (sized by the loader), whose
 * windows user space bins them into. */
const volatile bool cfg_percall_samples = false;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} percall_samples SEC(".maps");

/* --per-call: spin functions (spin_ranges[0, cfg_nr_spin)). */
const volatile __u32 cfg_nr_spin = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SPIN_MAX_RANGES);
	__type(key, __u32);
	__type(value, struct spin_range);
} spin_ranges SEC(".maps");

struct vma_probe {
	__u64 ip;
	__u64 off, ino, dev;
	bool file;
};

static long vma_file_offset(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_probe *p = data;
	struct file *f = vma->vm_file;

	if (!f)
		return 0;
	p->off = p->ip - vma->vm_start + (vma->vm_pgoff << 12);
	p->ino = f->f_inode->i_ino;
	p->dev = f->f_inode->i_sb->s_dev;
	p->file = true;
	return 0;
}

/* Was the thread's user code, where the sample found it (the syscall it is
 * in when the sample hit the kernel), in a spin function? */
static __always_inline bool user_ip_spins(struct task_struct *task)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct vma_probe p = {};

	if (!regs)
		return false;
	p.ip = PT_REGS_IP_CORE(regs);
	if (bpf_find_vma(task, p.ip, vma_file_offset, &p, 0) || !p.file)
		return false;
	for (__u32 i = 0; i < SPIN_MAX_RANGES; i++) {
		__u32 k = i;
		struct spin_range *r;

		if (i >= cfg_nr_spin)
			break;
		r = bpf_map_lookup_elem(&spin_ranges, &k);
		if (r && r->ino == p.ino && r->dev == p.dev && p.off >= r->start && p.off < r->end)
			return true;
	}
	return false;
}

SEC("perf_event")
int tmabpf_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct thread_stats *t = NULL;
	__u64 now = bpf_ktime_get_ns();
	struct sample_key key;
	__u32 pid, tid;
	struct sample_stats *s;
	bool folded = false;

	stat_inc(STAT_SAMPLES_SEEN);
	if (cfg_no_account) {
		if (!task_tracked(task->tgid, task->pid))
			return 0;
		pid = task->tgid;
		tid = task->pid;
		stat_inc(STAT_SAMPLES_TARGET);
	} else {
		t = thread_get(task);
		if (!t)
			return 0;
		stat_inc(STAT_SAMPLES_TARGET);
		/* NULL: the sample interrupted a fold (account_current_irq): the
		 * delta stays with the thread and goes to its next sample */
		folded = account_current_irq(t, task, now, true) != NULL;
		pid = t->pid;
		tid = t->tid;
		t->samples++;
		if (cfg_nr_spin && !(task->flags & PF_KTHREAD) && user_ip_spins(task))
			t->spin_samples++;
	}
	s = row_of(ctx, task, pid, tid, true, &key);
	if (cfg_percall_samples) {
		struct percall_sample *p = bpf_ringbuf_reserve(&percall_samples, sizeof(*p), 0);

		if (p) {
			p->ts = now;
			p->key = key;
			bpf_ringbuf_submit(p, BPF_RB_NO_WAKEUP);
		} else {
			stat_inc(STAT_PERCALL_SAMPLES_LOST);
		}
	}
	if (!s)
		return 0;
	s->count++;
	s->period += ctx->sample_period;
	if (t && folded)
		add_since_last_sample(s, t);
	return 0;
}

/* After an exec the process maps other files: user space drops its maps snapshot. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(tmabpf_sample_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct sample_key key = { .pid = p->tgid };

	if (task_tracked(p->tgid, p->pid))
		ringbuf_notice(&sample_notices, &key, sizeof(key), &stats, STAT_SAMPLE_NOTICES_LOST);
	return 0;
}
