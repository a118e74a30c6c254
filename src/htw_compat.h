/* SPDX-License-Identifier: GPL-2.0 */
/*
 * htwheel: the few kernel API differences between the kernels htwheel
 * builds against (Debian 6.1 and 6.12, and newer ones where cheap).
 */
#ifndef _HTW_COMPAT_H
#define _HTW_COMPAT_H

#include <linux/version.h>
#include <linux/hrtimer.h>
#include <linux/eventfd.h>
#include <linux/export.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/timer.h>

/*
 * Symbol namespaces: use EXPORT_SYMBOL_NS_GPL(sym, HTWHEEL) and
 * MODULE_IMPORT_NS(HTWHEEL).  Up to 6.12 the macros stringify the bare
 * token; from 6.13 on they take a string literal, which this provides.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
#define HTWHEEL			"HTWHEEL"
#define EXPORTED_FOR_KUNIT_TESTING	"EXPORTED_FOR_KUNIT_TESTING"
#endif

/*
 * The wheel's API and its test hooks (manual clocks, inspection, race
 * probes) are exported only to the KUnit suites, or, in a build with
 * HTW_BENCH=1, to the benchmark module.  The shipped module exports
 * nothing and has no hooks, whatever the kernel it is built for: the test
 * build's own flag decides, CONFIG_HTWHEEL_KUNIT_TEST (out of tree Kbuild
 * sets it for HTW_KUNIT=1 alone; in a kernel tree, Kconfig), never
 * CONFIG_KUNIT, which a DKMS build for a distribution kernel may well see.
 * So <kunit/visibility.h> (6.2 on, keyed on CONFIG_KUNIT) is taken in and
 * its two macros are redefined on that flag; on 6.1 they are defined here.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#include <kunit/visibility.h>
#endif
#undef VISIBLE_IF_KUNIT
#undef EXPORT_SYMBOL_IF_KUNIT
#if IS_ENABLED(CONFIG_HTWHEEL_KUNIT_TEST)
#define VISIBLE_IF_KUNIT
#define EXPORT_SYMBOL_IF_KUNIT(sym)	EXPORT_SYMBOL_NS(sym, EXPORTED_FOR_KUNIT_TESTING)
#else
#define VISIBLE_IF_KUNIT		static
#define EXPORT_SYMBOL_IF_KUNIT(sym)
#endif

#if defined(HTW_BENCH_HOOKS) && !IS_ENABLED(CONFIG_HTWHEEL_KUNIT_TEST)
#define EXPORT_SYMBOL_IF_HTW_TESTS(sym)	EXPORT_SYMBOL_NS_GPL(sym, HTWHEEL)
#else
#define EXPORT_SYMBOL_IF_HTW_TESTS(sym)	EXPORT_SYMBOL_IF_KUNIT(sym)
#endif

/* hrtimer_setup() replaced hrtimer_init() + assigning ->function in 6.13. */
static inline void htw_hrtimer_setup(struct hrtimer *timer,
				     enum hrtimer_restart (*fn)(struct hrtimer *),
				     clockid_t clockid, enum hrtimer_mode mode)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
	hrtimer_setup(timer, fn, clockid, mode);
#else
	hrtimer_init(timer, clockid, mode);
	timer->function = fn;
#endif
}

/* del_timer_sync() became timer_delete_sync() in 6.2 (alias kept to 6.14). */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 2, 0)
#define timer_delete_sync(t)	del_timer_sync(t)
#define timer_delete(t)		del_timer(t)
#endif

/* eventfd_signal() lost its count argument in 6.8: it always adds 1. */
static inline void htw_eventfd_signal(struct eventfd_ctx *ctx)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
	eventfd_signal(ctx);
#else
	eventfd_signal(ctx, 1);
#endif
}

/* vm_flags became read-only outside the vm_flags_*() helpers in 6.3. */
static inline void htw_vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

#endif /* _HTW_COMPAT_H */
