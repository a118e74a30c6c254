// SPDX-License-Identifier: GPL-2.0
/*
 * htwheel trace events: the one file that creates them (htw_trace.h).
 * A file of its own, on no layer, so that every layer may call them.
 */
#define CREATE_TRACE_POINTS
#include "htw_trace.h"
