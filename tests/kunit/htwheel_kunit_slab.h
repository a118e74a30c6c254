/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The htw_timer slab's object count, for the KUnit suites' leak checks:
 * real memory, not the module's own counter.
 */
#ifndef _HTWHEEL_KUNIT_SLAB_H
#define _HTWHEEL_KUNIT_SLAB_H

#include <kunit/test.h>
#include <linux/fs.h>
#include <linux/rcupdate.h>
#include <linux/string.h>
#include <linux/kstrtox.h>

/*
 * The memory, not the module's own counter: live objects of the htw_timer
 * kmem_cache as SLUB counts them in /sys/kernel/slab/htw_timer/objects
 * (the cache is SLAB_TYPESAFE_BY_RCU, so never merged and always listed
 * under its own name).  The count is exact once nothing is in flight:
 * rcu_barrier() finishes the RCU-deferred frees (SLUB_RCU_DEBUG), and
 * writing "1" to .../shrink empties KASAN's quarantine for the cache and
 * flushes the per-CPU slabs, whose free objects "objects" would otherwise
 * count as in use.  It needs CONFIG_SLUB_DEBUG (the test kernel has it);
 * the suites run alone, so nothing else allocates from the cache meanwhile.
 */
#define HTW_T_SLAB	"/sys/kernel/slab/htw_timer/"

static inline long htw_t_slab_objects(struct kunit *test)
{
	char buf[64] = "";
	struct file *f;
	loff_t pos = 0;
	ssize_t n;
	long v;

	if (!IS_ENABLED(CONFIG_SLUB_DEBUG) || !IS_ENABLED(CONFIG_SYSFS))
		kunit_skip(test, "no SLUB object counts in sysfs");
	rcu_barrier();
	f = filp_open(HTW_T_SLAB "shrink", O_WRONLY, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(f), HTW_T_SLAB "shrink: %ld", PTR_ERR(f));
	n = kernel_write(f, "1", 1, &pos);
	filp_close(f, NULL);
	KUNIT_ASSERT_EQ_MSG(test, n, 1, HTW_T_SLAB "shrink: %zd", n);
	f = filp_open(HTW_T_SLAB "objects", O_RDONLY, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(f), HTW_T_SLAB "objects: %ld", PTR_ERR(f));
	pos = 0;
	n = kernel_read(f, buf, sizeof(buf) - 1, &pos);
	filp_close(f, NULL);
	KUNIT_ASSERT_GT_MSG(test, n, 0, HTW_T_SLAB "objects: %zd", n);
	buf[n] = '\0';
	/* "N" or, with NUMA, "N N0=...": the first number is the total. */
	buf[strcspn(buf, " \n")] = '\0';
	KUNIT_ASSERT_EQ_MSG(test, kstrtol(buf, 10, &v), 0, "objects: '%s'", buf);
	return v;
}

#endif /* _HTWHEEL_KUNIT_SLAB_H */
