/* SPDX-License-Identifier: GPL-2.0 */
/*
 * htwheel trace events: events/htwheel/ in tracefs.  See
 * Documentation/tracing.rst for what each event says and how to use them.
 *
 * Every layer of the core calls these, so the header is rank 0: its
 * events take only numbers, never a structure of a layer (which a rank-0
 * header may not see), and htw_trace.c, rank 0 too, creates them.  A
 * disabled event is a static branch over the call, a NOP with
 * CONFIG_JUMP_LABEL: a caller passes only fields it already has in hand
 * and guards anything that needs work with trace_htwheel_*_enabled().
 *
 * @id in every event is the file's trace id (fdinfo "htw-trace-id"), so
 * that a filter "id == N" follows one instance; 0 for a wheel no file
 * owns (the KUnit suites', the benchmark's).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM htwheel

#if !defined(_HTW_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _HTW_TRACE_H

#include <linux/errno.h>
#include <linux/tracepoint.h>
#include <linux/types.h>
#include <linux/htwheel.h>

#ifndef _HTW_TRACE_CONSTANTS
#define _HTW_TRACE_CONSTANTS
/*
 * Which limit refused (htwheel_limit's @limit).  Macros rather than an
 * enum: the values then reach the events' format files as numbers.
 */
#define HTW_TRACE_LIMIT_INSTANCES	0	/* max_user_instances */
#define HTW_TRACE_LIMIT_TIMERS		1	/* max_user_timers */
#define HTW_TRACE_LIMIT_WHEEL_BYTES	2	/* max_user_wheel_bytes */
#define HTW_TRACE_LIMIT_MAX_PENDING	3	/* the file's or module's max_pending */

/* Where records went to user space (htwheel_deliver's @via). */
#define HTW_TRACE_VIA_READ		0	/* read() */
#define HTW_TRACE_VIA_RING		1	/* the table's completion ring */
#endif

/*
 * The layout of include/trace/events/error_report.h: each macro's
 * arguments aligned after its parenthesis, as checkpatch wants them.
 */

/**
 * htwheel_schedule - one HTW_IOC_SCHEDULE call
 * @id:    the file's trace id
 * @count: entries the batch asked for
 * @done:  entries scheduled (the ioctl's return value when it is > 0)
 * @error: the ioctl's error when none was scheduled, else 0
 */
TRACE_EVENT(htwheel_schedule,
	    TP_PROTO(u32 id, u32 count, u32 done, s32 error),
	    TP_ARGS(id, count, done, error),
	    TP_STRUCT__entry(__field(u32, id)
			     __field(u32, count)
			     __field(u32, done)
			     __field(s32, error)),
	    TP_fast_assign(__entry->id = id;
			   __entry->count = count;
			   __entry->done = done;
			   __entry->error = error;),
	    TP_printk("id=%u count=%u done=%u error=%d",
		      __entry->id, __entry->count, __entry->done,
		      __entry->error)
);

/**
 * htwheel_expire - a timer fired: its record joins the ready queue
 * @id:       the file's trace id
 * @handle:   the timer's handle
 * @cookie:   its cookie
 * @deadline: the deadline that expired, ns on the wheel's clock as the
 *            host sees it (not the opener's time namespace)
 * @fired:    the clock reading of the tick run that fired it
 *
 * lateness_ns is @fired - @deadline: never negative, as nothing fires
 * before its deadline.
 */
TRACE_EVENT(htwheel_expire,
	    TP_PROTO(u32 id, u64 handle, u64 cookie, u64 deadline, u64 fired),
	    TP_ARGS(id, handle, cookie, deadline, fired),
	    TP_STRUCT__entry(__field(u32, id)
			     __field(u64, handle)
			     __field(u64, cookie)
			     __field(u64, deadline_ns)
			     __field(s64, lateness_ns)),
	    TP_fast_assign(__entry->id = id;
			   __entry->handle = handle;
			   __entry->cookie = cookie;
			   __entry->deadline_ns = deadline;
			   __entry->lateness_ns = (s64)(fired - deadline);),
	    TP_printk("id=%u handle=0x%llx cookie=0x%llx deadline_ns=%llu lateness_ns=%lld",
		      __entry->id, __entry->handle, __entry->cookie,
		      __entry->deadline_ns, __entry->lateness_ns)
);

/**
 * htwheel_table_expire - a slot of the shared timer table fired: its
 * completion was written to the ring
 * @id:       the file's trace id
 * @slot:     the slot's number
 * @cookie:   the slot's cookie, as the completion carries it
 * @deadline: the slot's deadline, ns on the wheel's clock as the host
 *            sees it (the completion's is on the opener's time namespace)
 * @fired:    the clock reading of the tick run that fired it
 */
TRACE_EVENT(htwheel_table_expire,
	    TP_PROTO(u32 id, u32 slot, u64 cookie, u64 deadline, u64 fired),
	    TP_ARGS(id, slot, cookie, deadline, fired),
	    TP_STRUCT__entry(__field(u32, id)
			     __field(u32, slot)
			     __field(u64, cookie)
			     __field(u64, deadline_ns)
			     __field(s64, lateness_ns)),
	    TP_fast_assign(__entry->id = id;
			   __entry->slot = slot;
			   __entry->cookie = cookie;
			   __entry->deadline_ns = deadline;
			   __entry->lateness_ns = (s64)(fired - deadline);),
	    TP_printk("id=%u slot=%u cookie=0x%llx deadline_ns=%llu lateness_ns=%lld",
		      __entry->id, __entry->slot, __entry->cookie,
		      __entry->deadline_ns, __entry->lateness_ns)
);

/**
 * htwheel_cancel - one entry of an HTW_IOC_CANCEL batch
 * @id:     the file's trace id
 * @handle: the handle user space passed
 * @result: the entry's result: HTW_CANCELLED, HTW_CANCEL_FIRED or
 *          HTW_CANCEL_UNKNOWN
 */
TRACE_EVENT(htwheel_cancel,
	    TP_PROTO(u32 id, u64 handle, u32 result),
	    TP_ARGS(id, handle, result),
	    TP_STRUCT__entry(__field(u32, id)
			     __field(u32, result)
			     __field(u64, handle)),
	    TP_fast_assign(__entry->id = id;
			   __entry->result = result;
			   __entry->handle = handle;),
	    TP_printk("id=%u handle=0x%llx result=%s",
		      __entry->id, __entry->handle,
		      __print_symbolic(__entry->result,
				       { HTW_CANCELLED, "cancelled" },
				       { HTW_CANCEL_FIRED, "fired" },
				       { HTW_CANCEL_UNKNOWN, "unknown" }))
);

/**
 * htwheel_drain - one HTW_IOC_DRAIN call
 * @id:      the file's trace id
 * @drained: timers it cancelled
 */
TRACE_EVENT(htwheel_drain,
	    TP_PROTO(u32 id, u64 drained),
	    TP_ARGS(id, drained),
	    TP_STRUCT__entry(__field(u32, id)
			     __field(u64, drained)),
	    TP_fast_assign(__entry->id = id;
			   __entry->drained = drained;),
	    TP_printk("id=%u drained=%llu", __entry->id, __entry->drained)
);

/**
 * htwheel_tick - one batch of expiry processing
 * @id:        the file's trace id
 * @processed: timers it took from buckets (fired, cascaded or placed
 *             again) and, for a table, submissions and waiting slots
 * @fired:     timers of those that fired
 * @now:       the clock reading it processed up to
 * @next:      when the wheel's hrtimer is armed for now, ns on the
 *             wheel's clock; U64_MAX when nothing is armed
 * @more:      1 when the run stopped after a batch and its work item
 *             carries on at once
 */
TRACE_EVENT(htwheel_tick,
	    TP_PROTO(u32 id, u32 processed, u32 fired, u64 now, u64 next,
		     u32 more),
	    TP_ARGS(id, processed, fired, now, next, more),
	    TP_STRUCT__entry(__field(u32, id)
			     __field(u32, processed)
			     __field(u32, fired)
			     __field(u32, more)
			     __field(u64, now_ns)
			     __field(u64, next_ns)),
	    TP_fast_assign(__entry->id = id;
			   __entry->processed = processed;
			   __entry->fired = fired;
			   __entry->more = more;
			   __entry->now_ns = now;
			   __entry->next_ns = next;),
	    TP_printk("id=%u processed=%u fired=%u now_ns=%llu next_ns=%llu more=%u",
		      __entry->id, __entry->processed, __entry->fired,
		      __entry->now_ns, __entry->next_ns, __entry->more)
);

/**
 * htwheel_table_budget - a run of a table's tick ended at its budget
 * @id:     the file's trace id
 * @slots:  slots the run handled (at most HTW_TABLE_RUN_SLOTS)
 * @moves:  of them, moved to a later deadline (at most HTW_TABLE_RUN_MOVES)
 * @next:   clock time of the run that carries on, U64_MAX if none
 */
TRACE_EVENT(htwheel_table_budget,
	    TP_PROTO(u32 id, u32 slots, u32 moves, u64 next),
	    TP_ARGS(id, slots, moves, next),
	    TP_STRUCT__entry(__field(u32, id)
			     __field(u32, slots)
			     __field(u32, moves)
			     __field(u64, next_ns)),
	    TP_fast_assign(__entry->id = id;
			   __entry->slots = slots;
			   __entry->moves = moves;
			   __entry->next_ns = next;),
	    TP_printk("id=%u slots=%u moves=%u next_ns=%llu",
		      __entry->id, __entry->slots, __entry->moves,
		      __entry->next_ns)
);

/**
 * htwheel_deliver - records handed to user space
 * @id:      the file's trace id
 * @via:     HTW_TRACE_VIA_READ (one read() call) or HTW_TRACE_VIA_RING
 *           (completions one visit published to the table's ring)
 * @records: how many
 */
TRACE_EVENT(htwheel_deliver,
	    TP_PROTO(u32 id, u32 via, u32 records),
	    TP_ARGS(id, via, records),
	    TP_STRUCT__entry(__field(u32, id)
			     __field(u32, via)
			     __field(u32, records)),
	    TP_fast_assign(__entry->id = id;
			   __entry->via = via;
			   __entry->records = records;),
	    TP_printk("id=%u via=%s records=%u",
		      __entry->id,
		      __print_symbolic(__entry->via,
				       { HTW_TRACE_VIA_READ, "read" },
				       { HTW_TRACE_VIA_RING, "ring" }),
		      __entry->records)
);

/**
 * htwheel_limit - a request refused because a limit was reached
 * @id:    the file's trace id (for a refused open(), the one it would
 *         have had)
 * @limit: HTW_TRACE_LIMIT_*
 * @error: the errno user space gets, negative
 */
TRACE_EVENT(htwheel_limit,
	    TP_PROTO(u32 id, u32 limit, s32 error),
	    TP_ARGS(id, limit, error),
	    TP_STRUCT__entry(__field(u32, id)
			     __field(u32, limit)
			     __field(s32, error)),
	    TP_fast_assign(__entry->id = id;
			   __entry->limit = limit;
			   __entry->error = error;),
	    TP_printk("id=%u limit=%s error=%s",
		      __entry->id,
		      __print_symbolic(__entry->limit,
				       { HTW_TRACE_LIMIT_INSTANCES, "max_user_instances" },
				       { HTW_TRACE_LIMIT_TIMERS, "max_user_timers" },
				       { HTW_TRACE_LIMIT_WHEEL_BYTES, "max_user_wheel_bytes" },
				       { HTW_TRACE_LIMIT_MAX_PENDING, "max_pending" }),
		      __print_symbolic(-__entry->error,
				       { EMFILE, "EMFILE" },
				       { EDQUOT, "EDQUOT" },
				       { ENOSPC, "ENOSPC" },
				       { EINVAL, "EINVAL" }))
);

#endif /* _HTW_TRACE_H */

/* define_trace.h reads this file again from the directory -I names. */
#undef TRACE_INCLUDE_PATH
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE htw_trace
#include <trace/define_trace.h>
