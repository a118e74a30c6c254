// SPDX-License-Identifier: GPL-2.0
/*
 * htwheel: a hashed timing wheel for user space, behind /dev/htwheel.
 *
 * Module entry points only; the device lives in htw_dev.c.
 */
#include <linux/module.h>

#include "htw_api.h"

static int __init htw_init(void)
{
	return htw_dev_register();
}

static void __exit htw_exit(void)
{
	htw_dev_unregister();
}

module_init(htw_init);
module_exit(htw_exit);

MODULE_DESCRIPTION("Hashed timing wheel timers for user space");
MODULE_LICENSE("GPL");
