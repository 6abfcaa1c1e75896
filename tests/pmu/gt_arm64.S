// SPDX-License-Identifier: GPL-2.0
/*
 * gt_arm64 - the emulated-PMU tier's ground truth: a freestanding arm64
 * program (no libc) whose every thread retires a number of user-mode
 * instructions known from this file alone.
 *
 *   gt_arm64 T R M N [migrate]
 *
 * The main thread starts T worker threads (clone), then every thread, main
 * included, runs gt_top(R, M, N) and ends with exit(0) (no join: the process
 * ends with its last thread).  gt_top does R rounds of gt_mid(M, N) and a
 * sched_yield (so T >= 1 switches threads at every round on one CPU).
 * gt_mid spins N iterations itself, then calls gt_leaf(N) M times.  gt_leaf
 * spins N iterations.  N, M, R >= 1; 0 <= T <= 16.  With a fifth argument
 * (any), every thread instead calls gt_top(1, M, N) R times and moves itself
 * to the other of CPUs 0 and 1 (sched_setaffinity) after each: migrations
 * for -smp 2, where counts are not exact anyway.
 *
 * Instruction counts (every instruction retired at EL0, svc included; the
 * counted lines are marked below; tests/pmu/pmu_checks.py's model repeats them):
 *   gt_leaf(N)        2N + 2
 *   gt_mid(M, N)      own 2N + 4M + 9, plus M x gt_leaf
 *   gt_top(R, M, N)   own 7R + 11, plus R x gt_mid
 *   main thread       sum over the 4 arguments of (7 + 6 x its digits)
 *                     + 12T + 19, plus gt_top
 *   worker thread     9, plus gt_top: counted from its first instruction
 *                     after clone's svc (the cbz)
 * Each function begins with an instruction the kernel steps out of line
 * (not one it emulates), so that a uprobe on it still retires it at EL0.
 */
	.text

// gt_leaf(x0 = n): 2n + 2 (the loop is not at the entry, where the probe is)
	.globl gt_leaf
	.type gt_leaf, %function
gt_leaf:
	mov	x1, x0			// 1
1:	subs	x1, x1, #1		// n x 2
	b.ne	1b
	ret				// 1
	.size gt_leaf, . - gt_leaf

// gt_mid(x0 = m, x1 = n): own 2n + 4m + 9
	.globl gt_mid
	.type gt_mid, %function
gt_mid:
	stp	x29, x30, [sp, #-32]!	// 6
	mov	x29, sp
	stp	x19, x20, [sp, #16]
	mov	x19, x0
	mov	x20, x1
	mov	x0, x1
2:	subs	x0, x0, #1		// n x 2
	b.ne	2b
3:	mov	x0, x20			// m x 4
	bl	gt_leaf
	subs	x19, x19, #1
	b.ne	3b
	ldp	x19, x20, [sp, #16]	// 3
	ldp	x29, x30, [sp], #32
	ret
	.size gt_mid, . - gt_mid

// gt_top(x0 = r, x1 = m, x2 = n): own 7r + 11
	.globl gt_top
	.type gt_top, %function
gt_top:
	stp	x29, x30, [sp, #-48]!	// 7
	mov	x29, sp
	stp	x19, x20, [sp, #16]
	str	x21, [sp, #32]
	mov	x19, x0
	mov	x20, x1
	mov	x21, x2
4:	mov	x0, x20			// r x 7
	mov	x1, x21
	bl	gt_mid
	mov	x8, #124		// sched_yield
	svc	#0
	subs	x19, x19, #1
	b.ne	4b
	ldr	x21, [sp, #32]		// 4
	ldp	x19, x20, [sp, #16]
	ldp	x29, x30, [sp], #48
	ret
	.size gt_top, . - gt_top

// parse(x1 = string): x0 = its decimal value; 4 + 6 per digit
	.type parse, %function
parse:
	mov	x0, #0			// 1
5:	ldrb	w2, [x1], #1		// per digit 6 (ldrb cbz sub mov madd b)
	cbz	w2, 6f			// end: ldrb + cbz
	sub	w2, w2, #'0'
	mov	x3, #10
	madd	x0, x0, x3, x2
	b	5b
6:	ret				// 1
	.size parse, . - parse

// x22..x24 = r, m, n for every thread (clone copies the registers).
	.globl _start
	.type _start, %function
_start:
	ldr	x19, [sp]		// 3: argc; x19 = 1 with a fifth argument (gt_top keeps x19)
	cmp	x19, #6
	cset	x19, hs
	// argv: [sp] argc, [sp + 8] argv[0], [sp + 16..] T R M N; 3 + parse per argument
	ldr	x1, [sp, #16]
	bl	parse
	mov	x25, x0			// T
	ldr	x1, [sp, #24]
	bl	parse
	mov	x22, x0			// R
	ldr	x1, [sp, #32]
	bl	parse
	mov	x23, x0			// M
	ldr	x1, [sp, #40]
	bl	parse
	mov	x24, x0			// N
	adrp	x26, stacks		// 6
	add	x26, x26, :lo12:stacks
	mov	x27, #0			// threads started
	mov	x28, #0x3d0f		// CLONE_VM|FS|FILES|SIGHAND|THREAD|SYSVSEM|
	movk	x28, #0x3, lsl #16	//   PARENT_SETTID|CHILD_CLEARTID (0x3d0f00)
	lsl	x28, x28, #8
7:	cmp	x27, x25		// 2 per test (T + 1), 10 per thread started
	b.hs	8f
	add	x27, x27, #1
	add	x1, x26, x27, lsl #14	// its stack: 16 KiB, top of slot x27
	mov	x0, x28
	mov	x2, #0			// parent_tid
	mov	x3, #0			// tls
	mov	x4, #0			// child_tid
	mov	x8, #220		// clone
	svc	#0
	cbz	x0, 9f			// the new thread; the parent goes on
	b	7b
8:	cbnz	x19, 10f		// 1
	mov	x0, x22			// 4
	mov	x1, x23
	mov	x2, x24
	bl	gt_top
	mov	x0, #0			// 3
	mov	x8, #93			// exit (this thread only)
	svc	#0
9:	cbnz	x19, 10f		// worker: 1 (+ the cbz above)
	mov	x0, x22			// 4
	mov	x1, x23
	mov	x2, x24
	bl	gt_top
	mov	x0, #0			// 3
	mov	x8, #93
	svc	#0
10:	mov	x20, #2			// migrating threads: the CPU mask to move to next
	mov	x21, x22		// rounds
11:	mov	x0, #1
	mov	x1, x23
	mov	x2, x24
	bl	gt_top
	str	x20, [sp, #-16]!	// sched_setaffinity(0, 8, &mask)
	mov	x0, #0
	mov	x1, #8
	mov	x2, sp
	mov	x8, #122
	svc	#0
	add	sp, sp, #16
	eor	x20, x20, #3
	subs	x21, x21, #1
	b.ne	11b
	mov	x0, #0
	mov	x8, #93
	svc	#0
	.size _start, . - _start

	.bss
	.balign 16
stacks:	.skip 17 * 16384
