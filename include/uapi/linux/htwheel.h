/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * htwheel: a hashed timing wheel behind a character device.
 *
 * Each open() of /dev/htwheel is an independent timer instance.  The first
 * ioctl on a new file must be HTW_IOC_API; every other htwheel ioctl, and
 * read(), fails with EBADFD until it succeeded.
 *
 * All structures have a fixed layout: fixed-width fields, explicit padding
 * and reserved fields that must be zero on input and are zero on output.
 * Times are nanoseconds on the instance's clock (CLOCK_MONOTONIC unless
 * HTW_IOC_SETUP chose CLOCK_BOOTTIME); absolute times (an HTW_TIMER_ABSTIME
 * deadline, the times of struct htw_expiry) are that clock as seen in the
 * time namespace of the task that opened the file.
 *
 * open() fails with EMFILE once the opener's user holds max_user_instances
 * files of the device; live timers (EDQUOT at max_user_timers) and wheel
 * structures (EDQUOT at max_user_wheel_bytes) are limited per user too,
 * counted per user namespace and charged up to the namespaces' creators.
 * Each user namespace but the initial one also has a budget of its own
 * for all three (HTW_IOC_NS_LIMITS_GET / _SET), which bounds what it and
 * the namespaces nested in it take from its creator's limits.
 *
 * See Documentation/userspace-api/htwheel.rst.
 */
#ifndef _UAPI_LINUX_HTWHEEL_H
#define _UAPI_LINUX_HTWHEEL_H

#include <linux/types.h>
#include <linux/ioctl.h>

/* The API version this header describes. */
#define HTW_API_VERSION		1

/* Feature bits reported by (and requestable through) HTW_IOC_API. */
#define HTW_FEATURE_TABLE	0x1ULL	/* the shared timer table: see below */
#define HTW_FEATURES_ALL	HTW_FEATURE_TABLE

/**
 * struct htw_api - the API handshake (HTW_IOC_API)
 * @api:      in: HTW_API_VERSION
 * @flags:    in: must be 0
 * @features: in: features the caller requires (must be supported);
 *            out: every feature this kernel supports
 * @ioctls:   out: bit (1 << _IOC_NR(cmd)) set for every ioctl accepted
 *            on this file from now on
 * @reserved: in: must be 0; out: 0
 */
struct htw_api {
	__u32 api;
	__u32 flags;
	__u64 features;
	__u64 ioctls;
	__u64 reserved[5];
};

/**
 * struct htw_setup - the instance's geometry (HTW_IOC_SETUP)
 * @tick_ns:     in: tick length, 0 for the module default; out: in effect
 * @slots:       in: buckets per level, 0 for the default, rounded up to a
 *               power of two; out: in effect
 * @clockid:     in: CLOCK_MONOTONIC (1) or CLOCK_BOOTTIME (7)
 * @max_pending: in: pending timer limit of this file, 0 for the default,
 *               at most the module parameter max_pending; out: in effect
 * @levels:      out: wheel levels derived from tick and slots
 * @flags:       in: must be 0
 * @reserved:    in: must be 0; out: 0
 */
struct htw_setup {
	__u64 tick_ns;
	__u32 slots;
	__u32 clockid;
	__u64 max_pending;
	__u32 levels;
	__u32 flags;
	__u64 reserved[4];
};

/* struct htw_timer_entry flags */
#define HTW_TIMER_ABSTIME	0x1	/* @expires is a deadline, not a delay */
#define HTW_TIMER_FLAGS_ALL	HTW_TIMER_ABSTIME

/**
 * struct htw_timer_entry - one timer to schedule
 * @cookie:    returned in the timer's expiry records
 * @expires:   delay from now, or with HTW_TIMER_ABSTIME a deadline on the
 *             instance's clock in the opener's time namespace (a deadline in
 *             the past fires at the next tick)
 * @period_ns: 0 for a one-shot timer, else the period of a periodic timer
 * @slack_ns:  the timer may fire up to this much after its deadline so that
 *             timers due close together share a tick; 0 for none
 * @flags:     HTW_TIMER_*
 * @pad:       must be 0
 * @handle:    out: the timer's handle, for HTW_IOC_CANCEL and HTW_IOC_REARM
 */
struct htw_timer_entry {
	__u64 cookie;
	__u64 expires;
	__u64 period_ns;
	__u64 slack_ns;
	__u32 flags;
	__u32 pad;
	__u64 handle;
};

/**
 * struct htw_schedule - schedule a batch of timers (HTW_IOC_SCHEDULE)
 * @entries:  user pointer to @count struct htw_timer_entry
 * @count:    1 .. HTW_BATCH_MAX
 * @flags:    must be 0
 * @done:     out: entries scheduled (also the ioctl's return value)
 * @pad:      must be 0
 * @reserved: must be 0
 */
struct htw_schedule {
	__u64 entries;
	__u32 count;
	__u32 flags;
	__u32 done;
	__u32 pad;
	__u64 reserved[3];
};

#define HTW_BATCH_MAX		(1U << 20)

/* struct htw_cancel_entry results */
#define HTW_CANCELLED		0	/* was pending, will never fire */
#define HTW_CANCEL_FIRED	1	/* already expired, record not yet read */
#define HTW_CANCEL_UNKNOWN	2	/* no such timer on this file */

/**
 * struct htw_cancel_entry - one timer to cancel
 * @handle: in: a handle from HTW_IOC_SCHEDULE
 * @result: out: HTW_CANCELLED, HTW_CANCEL_FIRED or HTW_CANCEL_UNKNOWN
 * @pad:    must be 0
 */
struct htw_cancel_entry {
	__u64 handle;
	__u32 result;
	__u32 pad;
};

/**
 * struct htw_cancel - cancel a batch of timers (HTW_IOC_CANCEL)
 * @entries:   user pointer to @count struct htw_cancel_entry
 * @count:     1 .. HTW_BATCH_MAX
 * @flags:     must be 0
 * @cancelled: out: entries whose result is HTW_CANCELLED
 * @pad:       must be 0
 * @reserved:  must be 0
 */
struct htw_cancel {
	__u64 entries;
	__u32 count;
	__u32 flags;
	__u32 cancelled;
	__u32 pad;
	__u64 reserved[3];
};

/*
 * struct htw_rearm_entry results.  FIRED: the timer had expired and its
 * record was not read yet; the record is withdrawn (read() never returns
 * it) and the timer is pending again.  UNKNOWN: cancelled, drained, a
 * one-shot whose record was read, another file's or never issued.
 */
#define HTW_REARMED		0	/* was pending; now due at the new time */
#define HTW_REARM_FIRED		1	/* record withdrawn; pending again */
#define HTW_REARM_UNKNOWN	2	/* no such timer on this file; nothing done */

/**
 * struct htw_rearm_entry - one timer to move to a new expiry time
 * @handle:  in: a handle from HTW_IOC_SCHEDULE
 * @expires: in: delay from now, or with HTW_TIMER_ABSTIME a deadline, as
 *           in struct htw_timer_entry
 * @flags:   in: HTW_TIMER_ABSTIME or 0
 * @result:  out: HTW_REARMED, HTW_REARM_FIRED or HTW_REARM_UNKNOWN
 *
 * The timer keeps its handle, cookie, period and slack, and never fires
 * before the new time.  A periodic timer's next expiry is the new time;
 * later ones follow from it, one period apart.
 */
struct htw_rearm_entry {
	__u64 handle;
	__u64 expires;
	__u32 flags;
	__u32 result;
};

/**
 * struct htw_rearm - re-arm a batch of timers in place (HTW_IOC_REARM)
 * @entries:  user pointer to @count struct htw_rearm_entry
 * @count:    1 .. HTW_BATCH_MAX
 * @flags:    must be 0
 * @rearmed:  out: entries whose result is HTW_REARMED (were pending)
 * @pad:      must be 0
 * @reserved: must be 0
 *
 * Like mod_timer(): works whether or not a timer is still pending, and
 * says which it was.  Every entry is checked, and the results checked
 * writable, before any timer moves; a file that never scheduled gets
 * HTW_REARM_UNKNOWN for every entry and no wheel (HTW_IOC_SETUP still
 * works).
 */
struct htw_rearm {
	__u64 entries;
	__u32 count;
	__u32 flags;
	__u32 rearmed;
	__u32 pad;
	__u64 reserved[3];
};

/**
 * struct htw_unexpired - a timer that never ran, from HTW_IOC_DRAIN
 * @cookie:       the timer's cookie
 * @handle:       the timer's (now stale) handle
 * @remaining_ns: time that was left until its deadline, 0 if already due
 * @reserved:     0
 */
struct htw_unexpired {
	__u64 cookie;
	__u64 handle;
	__u64 remaining_ns;
	__u64 reserved;
};

/**
 * struct htw_drain - cancel every pending timer (HTW_IOC_DRAIN)
 * @entries:  user pointer to room for @count struct htw_unexpired, or 0
 *            when @count is 0
 * @count:    capacity of @entries, 0 .. HTW_BATCH_MAX
 * @flags:    must be 0
 * @drained:  out: timers cancelled (may exceed @count: only the first
 *            @count are described)
 * @reserved: must be 0
 */
struct htw_drain {
	__u64 entries;
	__u32 count;
	__u32 flags;
	__u64 drained;
	__u64 reserved[3];
};

#define HTW_LATE_BUCKETS	32

/**
 * struct htw_stats - counters and geometry (HTW_IOC_STATS)
 * @flags:        in: must be 0
 * @clockid:      out: the instance's clock
 * @tick_ns:      out: tick length
 * @slots:        out: buckets per level
 * @levels:       out: levels
 * @max_pending:  out: pending timer limit of this file
 * @pending:      out: timers scheduled and not yet expired
 * @ready:        out: expiry records waiting to be read
 * @scheduled:    out: timers ever scheduled
 * @fired:        out: expirations (each period of a periodic timer counts)
 * @cancelled:    out: timers cancelled (HTW_IOC_CANCEL or HTW_IOC_DRAIN)
 * @cascaded:     out: moves of a timer to a finer level
 * @tick_wakeups: out: times the instance's timer interrupt ran
 * @max_late_ns:  out: largest lateness of an expiration
 * @late_hist:    out: expirations by lateness: [0] < 2 ns, [i] in
 *                [2^i, 2^(i+1)) ns, the last bucket is open-ended
 * @reserved:     out: 0
 *
 * The counters are of the file's own timers: a table reports its own
 * (HTW_IOC_TABLE2_STATS).
 */
struct htw_stats {
	__u32 flags;
	__u32 clockid;
	__u64 tick_ns;
	__u32 slots;
	__u32 levels;
	__u64 max_pending;
	__u64 pending;
	__u64 ready;
	__u64 scheduled;
	__u64 fired;
	__u64 cancelled;
	__u64 cascaded;
	__u64 tick_wakeups;
	__u64 max_late_ns;
	__u64 late_hist[HTW_LATE_BUCKETS];
	__u64 reserved[4];
};

/**
 * struct htw_eventfd - the eventfd signalled on new expirations
 * @fd:       an eventfd to register, or -1 to clear
 * @flags:    must be 0
 * @reserved: must be 0
 */
struct htw_eventfd {
	__s32 fd;
	__u32 flags;
	__u64 reserved;
};

/* struct htw_expiry flags */
#define HTW_EXPIRY_PERIODIC	0x1	/* periodic, and will fire again */

/**
 * struct htw_expiry - one record returned by read()
 * @cookie:      the timer's cookie
 * @handle:      the timer's handle
 * @deadline_ns: the deadline that expired (for a periodic timer with
 *               overruns: the first one not read before)
 * @expired_ns:  clock time of the tick that expired it (>= @deadline_ns)
 * @overrun:     periods that expired after @deadline_ns and before this read
 * @flags:       HTW_EXPIRY_*
 * @reserved:    0
 */
struct htw_expiry {
	__u64 cookie;
	__u64 handle;
	__u64 deadline_ns;
	__u64 expired_ns;
	__u32 overrun;
	__u32 flags;
	__u64 reserved;
};

/**
 * struct htw_table_stats - what a table cost the kernel
 *                          (HTW_IOC_TABLE2_STATS); every count since the
 *                          table was made
 * @flags:        in: must be 0
 * @entries:      out: slots of the table
 * @runs:         out: runs of the table's kernel timer (its wake-ups)
 * @taken:        out: submissions taken in from the submission ring
 * @consumed:     out: entries of the submission ring consumed: @taken and
 *                those skipped over (bad slot numbers, a tail more than a
 *                ring ahead)
 * @fired:        out: records written to the completion ring
 * @moved:        out: slots a visit moved to the later deadline user space
 *                had stored (the lazy re-arm)
 * @budget_stops: out: runs that ended at their budget (16384 slots, or
 *                1024 moved), the rest left for a later tick
 * @room_waits:   out: slots that came due while the completion ring was
 *                full, and waited for room (the header's cq_waits)
 * @reserved:     out: 0
 */
struct htw_table_stats {
	__u32 flags;
	__u32 entries;
	__u64 runs;
	__u64 taken;
	__u64 consumed;
	__u64 fired;
	__u64 moved;
	__u64 budget_stops;
	__u64 room_waits;
	__u64 reserved[8];
};

/*
 * THE SHARED TIMER TABLE (HTW_FEATURE_TABLE; the "2" in its names is its
 * protocol's version: the first, HTW_IOC_TABLE_SETUP's, is gone, and its
 * ioctl numbers 0x08-0x0a are refused with ENOTTY).  HTW_IOC_TABLE2_CREATE on
 * a device file makes a table object and returns a new file descriptor of
 * its own (close-on-exec): the table's mmap(), poll(), its ioctls
 * (HTW_IOC_TABLE2_ENTER, HTW_IOC_TABLE2_STATS) and its fdinfo are that
 * file's; the device file's timers, read() and eventfd know nothing of it.
 * The table keeps the device file's clock, tick, time namespace and user,
 * and lives until its last descriptor and mapping are gone.  mmap() of the
 * table's file at offset 0, MAP_SHARED, maps:
 *
 *   offset 0      struct htw_table2_header: a 64-byte line each for the
 *                 kernel's fields, the producer's and the consumer's
 *   @slots_off    struct htw_table2_slot[entries]      user and kernel
 *   @sq_off       __u32[sq_entries]: slot numbers      user -> kernel
 *   @cq_off       struct htw_table2_cqe[cq_entries]    kernel -> user
 *
 * A slot's @seq is (generation << 1) | HTW_TABLE2_ARMED; the generation
 * counts the slot's armings and cancels, the deadline of generation g is
 * @deadline_ns[g & 1] (absolute on the table's clock, as the opener's time
 * namespace sees it).  One thread at a time arms and cancels a slot:
 *
 *   arm or move:  s = seq, read plainly (only user space changes the
 *                 generation); g = (s >> 1) + 1; the kernel must look at
 *                 the slot ("need") if s is not armed (the slot fired, was
 *                 cancelled, or is idle) or if d is earlier than
 *                 deadline_ns[(g - 1) & 1]; a later deadline needs nothing,
 *                 the kernel reads the slot again when the earlier one is
 *                 due.  Then:
 *                   deadline_ns[g & 1] = d;
 *                   if need and queued == 0: submit (below);
 *                   old = xchg(&seq, g << 1 | HTW_TABLE2_ARMED);  (the one
 *                     full barrier)
 *                   if old is not armed: need (the kernel fired it meanwhile);
 *                   if need: if queued reads 0 now (the kernel took the
 *                     slot in, maybe before the exchange), submit again and
 *                     issue a full barrier; then if d is earlier than the
 *                     header's next_wakeup_ns, HTW_IOC_TABLE2_ENTER (again
 *                     if a signal cut it short with EINTR).
 *                 To submit: store 1 in @queued, the slot number in the
 *                 submission ring, then the ring's tail (release).
 *   cancel:       old = xchg(&seq, (g + 1) << 1) with g = seq >> 1: if old
 *                 was armed, that arming is cancelled and no record of it
 *                 will ever come; if not, it fired (its record is in the
 *                 completion ring, or was read) or there was none.
 *   quiet cancel: a store (release) of (g + 1) << 1 instead of the exchange,
 *                 for a caller that need not know: no barrier; the arming
 *                 ends as cancelled unless the kernel fired it first, and
 *                 then its record, of generation g, still comes (a caller
 *                 that armed the slot again tells it by its generation).
 *
 * The kernel fires generation g only by a compare-and-exchange of @seq from
 * g << 1 | HTW_TABLE2_ARMED to g << 1, after reading @deadline_ns[g & 1]
 * (acquire on @seq first) and finding it due: an arming user space
 * cancelled or re-armed before that exchange never fires, one it fires is
 * in exactly one record, which carries the generation.  A slot is in the
 * submission ring at most once until the kernel takes it in (it stores 0
 * in @queued, then reads the slot after a full barrier), so the ring,
 * one entry a slot, is never full.  The completion ring is smaller than
 * the table: slots that come due while it is full wait in the kernel (the
 * header's @cq_waits counts them) and move into it as the consumer makes
 * room.  The rings are single-producer, single-consumer: the producer
 * writes the entries, then the tail with release ordering; the consumer
 * reads the tail with acquire ordering, then the entries, then writes the
 * head with release ordering.  See htwheel.rst, "The timer table".
 */
#define HTW_TABLE2_ARMED	0x1ULL

/**
 * struct htw_table2_setup - make a timer table (HTW_IOC_TABLE2_CREATE)
 * @entries:    in: slots, 1 to the module parameter max_pending
 * @flags:      in: must be 0
 * @sq_entries: out: submission ring entries, the power of two >= @entries
 * @cq_entries: out: completion ring entries: max(256, @sq_entries / 8),
 *              at most @sq_entries
 * @mmap_size:  out: bytes to mmap() at offset 0 (a multiple of the page size)
 * @slots_off:  out: where the slots begin in the mapping
 * @sq_off:     out: where the submission ring begins
 * @cq_off:     out: where the completion ring begins
 * @fd:         out: the table's file descriptor (also the return value)
 * @pad:        out: 0
 * @reserved:   in: must be 0; out: 0
 */
struct htw_table2_setup {
	__u32 entries;
	__u32 flags;
	__u32 sq_entries;
	__u32 cq_entries;
	__u64 mmap_size;
	__u64 slots_off;
	__u64 sq_off;
	__u64 cq_off;
	__s32 fd;
	__u32 pad;
	__u64 reserved[3];
};

/**
 * struct htw_table2_header - the start of the mapping, 256 bytes
 * @next_wakeup_ns: kernel: the kernel takes in the submission ring at or
 *                  soon after this time without being asked (its next
 *                  run), ~0ULL when it has no run planned
 * @sq_head:        kernel: submissions taken in so far
 * @cq_tail:        kernel: records written so far
 * @cq_waits:       kernel: due slots that found the completion ring full
 * @sq_invalid:     kernel: submissions that named no slot (ignored)
 * @sq_tail:        producer: submissions written so far
 * @cq_head:        consumer: records consumed so far
 * @entries:        constant: slots
 * @sq_mask:        constant: sq_entries - 1 (entry i is at i & @sq_mask)
 * @cq_mask:        constant: cq_entries - 1
 * @pad*, *_reserved: 0
 *
 * Indices are free-running __u32 counters.
 */
struct htw_table2_header {
	__u64 next_wakeup_ns;
	__u32 sq_head;
	__u32 cq_tail;
	__u64 cq_waits;
	__u64 sq_invalid;
	__u64 kernel_reserved[4];
	__u32 sq_tail;
	__u32 pad0;
	__u64 producer_reserved[7];
	__u32 cq_head;
	__u32 pad1;
	__u64 consumer_reserved[7];
	__u32 entries;
	__u32 sq_mask;
	__u32 cq_mask;
	__u32 pad2;
	__u64 const_reserved[6];
};

/**
 * struct htw_table2_slot - one timer of the table, 32 bytes
 * @seq:         (generation << 1) | HTW_TABLE2_ARMED when armed
 * @deadline_ns: the deadline of generation g in [g & 1]
 * @queued:      1 from user space's submission of the slot until the
 *               kernel takes it in (it stores 0)
 * @reserved:    ignored
 */
struct htw_table2_slot {
	__u64 seq;
	__u64 deadline_ns[2];
	__u32 queued;
	__u32 reserved;
};

/**
 * struct htw_table2_cqe - one expiry record, 16 bytes
 * @slot:  the slot that fired
 * @flags: 0
 * @gen:   the generation that fired (the slot's @seq >> 1 when armed)
 */
struct htw_table2_cqe {
	__u32 slot;
	__u32 flags;
	__u64 gen;
};

/* Indexes of the limits in struct htw_ns_limits. */
#define HTW_NS_INSTANCES	0	/* open files of the device */
#define HTW_NS_TIMERS		1	/* live timers */
#define HTW_NS_WHEEL_BYTES	2	/* bytes of wheel structures */
#define HTW_NS_LIMITS		3

/**
 * struct htw_ns_limits - a user namespace's budget
 *                        (HTW_IOC_NS_LIMITS_GET, HTW_IOC_NS_LIMITS_SET)
 * @userns_fd: in: a descriptor of the user namespace (an open
 *             /proc/PID/ns/user), or -1 for the caller's own; never the
 *             initial namespace, whose limits are the module parameters
 * @flags:     in: must be 0
 * @max:       GET out: each limit in effect for the namespace as a whole;
 *             SET in: the namespace's own maximum, or 0 to go back to the
 *             default (a quarter of what is in effect one namespace up)
 * @used:      GET out: what the namespace and those nested in it hold;
 *             SET in: must be 0
 * @own:       GET out: bit (1 << i) set when @max[i] was set by
 *             HTW_IOC_NS_LIMITS_SET, clear when it is the default;
 *             SET in: must be 0
 * @pad:       in: must be 0; out: 0
 * @reserved:  in: must be 0; out: 0
 */
struct htw_ns_limits {
	__s32 userns_fd;
	__u32 flags;
	__u64 max[HTW_NS_LIMITS];
	__u64 used[HTW_NS_LIMITS];
	__u32 own;
	__u32 pad;
	__u64 reserved[4];
};

#define HTW_IOC_MAGIC		0xB9

#define HTW_IOC_API		_IOWR(HTW_IOC_MAGIC, 0x00, struct htw_api)
#define HTW_IOC_SETUP		_IOWR(HTW_IOC_MAGIC, 0x01, struct htw_setup)
#define HTW_IOC_SCHEDULE	_IOWR(HTW_IOC_MAGIC, 0x02, struct htw_schedule)
#define HTW_IOC_CANCEL		_IOWR(HTW_IOC_MAGIC, 0x03, struct htw_cancel)
#define HTW_IOC_DRAIN		_IOWR(HTW_IOC_MAGIC, 0x04, struct htw_drain)
#define HTW_IOC_STATS		_IOWR(HTW_IOC_MAGIC, 0x05, struct htw_stats)
#define HTW_IOC_SET_EVENTFD	_IOW(HTW_IOC_MAGIC, 0x06, struct htw_eventfd)
#define HTW_IOC_REARM		_IOWR(HTW_IOC_MAGIC, 0x07, struct htw_rearm)
/* 0x08-0x0a: the table's first protocol, gone (ENOTTY). */
#define HTW_IOC_NS_LIMITS_GET	_IOWR(HTW_IOC_MAGIC, 0x0b, struct htw_ns_limits)
#define HTW_IOC_NS_LIMITS_SET	_IOW(HTW_IOC_MAGIC, 0x0c, struct htw_ns_limits)
/* On a device file: returns the new table's file descriptor. */
#define HTW_IOC_TABLE2_CREATE	_IOWR(HTW_IOC_MAGIC, 0x0d, struct htw_table2_setup)
/* On a table's file: take the submission ring in now; returns those taken. */
#define HTW_IOC_TABLE2_ENTER	_IO(HTW_IOC_MAGIC, 0x0e)
/* On a table's file: what it cost the kernel. */
#define HTW_IOC_TABLE2_STATS	_IOWR(HTW_IOC_MAGIC, 0x0f, struct htw_table_stats)

#endif /* _UAPI_LINUX_HTWHEEL_H */
