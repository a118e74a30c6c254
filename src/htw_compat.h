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
#include <linux/user_namespace.h>

/*
 * What the KUnit suites may call: a definition marked VISIBLE_IF_KUNIT is
 * static in the shipped module and global in a test build, and
 * EXPORT_SYMBOL_IF_KUNIT() exports it, in the namespace
 * EXPORTED_FOR_KUNIT_TESTING, to a test build's modules only; a static
 * stub (KUNIT_STATIC_STUB_REDIRECT) lets a running suite replace a
 * function for the length of one test.  These are <kunit/visibility.h>
 * and <kunit/static_stub.h>, taken in unchanged in a test build.
 *
 * Which build this is comes from the build's own flag, HTW_TEST_BUILD
 * (Kbuild: HTW_KUNIT=1 or HTW_BENCH=1 out of tree, CONFIG_HTWHEEL_KUNIT_TEST
 * in a kernel tree), never from the target kernel's CONFIG_KUNIT, which
 * those headers key on: DKMS may build the shipped module for a kernel
 * with KUnit (Debian's 6.12 has it), and that module must carry no
 * exports and no hooks.  So the shipped module never includes them and
 * gets, here, the very definitions they give a kernel without KUnit.  The
 * benchmark's build (HTW_BENCH=1) is a test build for kernels without
 * KUnit, Debian's 6.1 among them, which has neither header: it gets the
 * definitions <kunit/visibility.h> gives a kernel with KUnit, and no stubs.
 */
#if defined(HTW_TEST_BUILD) && IS_ENABLED(CONFIG_KUNIT)
#include <kunit/static_stub.h>
#include <kunit/visibility.h>
#else
#define KUNIT_STATIC_STUB_REDIRECT(real_fn_name, args...) do {} while (0)
#ifdef HTW_TEST_BUILD
#define VISIBLE_IF_KUNIT
#define EXPORT_SYMBOL_IF_KUNIT(symbol) EXPORT_SYMBOL_NS(symbol, \
	    EXPORTED_FOR_KUNIT_TESTING)
#else
#define VISIBLE_IF_KUNIT static
#define EXPORT_SYMBOL_IF_KUNIT(symbol)
#endif
#endif

/* The namespace macros take a string literal from 6.13 on. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
#define EXPORTED_FOR_KUNIT_TESTING	"EXPORTED_FOR_KUNIT_TESTING"
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

static inline void htw_vm_flags_clear(struct vm_area_struct *vma, vm_flags_t flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

/* References held on a user namespace (ns_common's count in 6.1 and 6.12). */
static inline unsigned int htw_userns_refs(struct user_namespace *ns)
{
	return refcount_read(&ns->ns.count);
}

#endif /* _HTW_COMPAT_H */
