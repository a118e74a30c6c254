#include "kunit_module.c"
