// SPDX-License-Identifier: GPL-2.0
/* The time-travel KUnit module: same module information. */
#include "kunit_module.c"
