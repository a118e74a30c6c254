// SPDX-License-Identifier: GPL-2.0
/*
 * The module information of the KUnit test modules.  Their suites live in
 * tests/kunit/htwheel_*_test.c (real time) and htwheel_tt_*_test.c (booted
 * with UML time travel); each file registers its own suites.
 */
#include <linux/module.h>

#include "htw_compat.h"

MODULE_DESCRIPTION("KUnit suites for htwheel");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(HTWHEEL);
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
