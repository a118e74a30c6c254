// SPDX-License-Identifier: GPL-2.0
/*
 * htwheel: a hashed timing wheel for user space, behind /dev/htwheel.
 *
 * Module entry points only.  The core is layered, each file calling only
 * the ones before it: htw_grid.c (tick-grid arithmetic), htw_handles.c
 * (the handle table), htw_wheel.c (buckets, ready queue and their
 * operations), htw_tick.c (the hrtimer and expiry); then the device,
 * htw_dev.c, the per-user limits and namespace budgets, htw_limits.c, and
 * the budgets' ioctls, htw_userns.c.
 */
#include <linux/module.h>

#include "htw_api.h"
#include "htw_limits.h"
#include "htw_tick.h"
#include "htw_wheel.h"

static int __init htw_init(void)
{
	int ret;

	htw_limits_init();
	ret = htw_wheel_module_init();
	if (ret)
		return ret;
	ret = htw_tick_module_init();
	if (ret)
		goto out_wheel;
	ret = htw_dev_register();
	if (ret)
		goto out_tick;
	return 0;

out_tick:
	htw_tick_module_exit();
out_wheel:
	htw_wheel_module_exit();
	htw_limits_exit();
	return ret;
}

static void __exit htw_exit(void)
{
	htw_dev_unregister();
	htw_tick_module_exit();
	htw_wheel_module_exit();
	htw_limits_exit();
}

module_init(htw_init);
module_exit(htw_exit);

MODULE_DESCRIPTION("Hashed timing wheel timers for user space");
MODULE_LICENSE("GPL");
