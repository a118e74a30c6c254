// SPDX-License-Identifier: GPL-2.0
/*
 * The shared object of the time-travel KUnit module, htwheel_kunit_tt.ko:
 * the same module information and helpers.  A module of its own needs
 * its own copy (kbuild warns of an object linked into two modules).
 */
#include "htw_kunit_module.c"
