// SPDX-License-Identifier: GPL-2.0
/*
 * htwheel: the /dev/htwheel misc device.
 *
 * Every open() is its own timer instance; its state lives in
 * file->private_data.  The ioctl switch only dispatches: each command has
 * one short handler that copies its argument in, validates all of it, and
 * only then takes a lock.
 *
 * Handlers are named for what they serve: htw_ioc_<command>() for an
 * ioctl, htw_char_<operation>() for a file operation (so that none reads
 * like libhtwheel's functions or the uapi structures).  The one lock of a
 * file, and what it serialises, is described at struct htw_file.
 *
 * What a user may hold is counted per (user namespace, uid) up the
 * namespace chain (htw_limits.c); absolute times are on the opener's time
 * namespace clock (htw_timens.h).  Loops over user-sized arrays yield the
 * CPU between steps and stop early when the caller is being killed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/eventfd.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/poll.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/xarray.h>

#include "htw_api.h"
#include "htw_compat.h"
#include "htw_limits.h"
#include "htw_table.h"
#include "htw_table_fd.h"
#include "htw_timens.h"
#include "htw_tick.h"
#include "htw_trace.h"

#define HTW_NAME	"htwheel"

/* Entries copied in or out per step of a batch: bounds kernel buffers. */
#define HTW_CHUNK	256

static unsigned long default_tick_ns = NSEC_PER_MSEC;
module_param(default_tick_ns, ulong, 0644);
MODULE_PARM_DESC(default_tick_ns, "Tick of a new instance, ns (default 1 ms)");

static unsigned int default_slots = 512;
module_param(default_slots, uint, 0644);
MODULE_PARM_DESC(default_slots, "Buckets per level of a new instance (default 512)");

static unsigned long max_pending = 1UL << 20;
module_param(max_pending, ulong, 0644);
MODULE_PARM_DESC(max_pending, "Most live timers one open file may hold (default 1048576)");

/**
 * struct htw_file - one open file, one timer instance
 * @lock:        a mutex, held outside every lock of the wheel (whose
 *               order struct htw_wheel in htw_internal.h states).  It
 *               serialises: the handshake (@api_done); @geo with the
 *               wheel's creation, so HTW_IOC_SETUP and a first schedule
 *               never interleave; changes of @eventfd; and each read()'s
 *               peek/consume pairs (and @buf) with each other and with
 *               HTW_IOC_DRAIN, which the wheel requires.  Schedule, cancel
 *               and stats of an existing wheel do not take it: @wheel is
 *               published once and never changes until release, so
 *               threads scheduling on different buckets never contend
 * @wheel:       created on first use with @geo, then fixed until release;
 *               published with smp_store_release(), read with
 *               smp_load_acquire() and no lock
 * @geo:         the geometry the wheel will have (HTW_IOC_SETUP), under
 *               @lock; the wheel's own once it exists.  Written under
 *               @lock and @geo_lock too, so that STATS and fdinfo read it
 *               under @geo_lock alone: they never sleep on @lock
 * @geo_lock:    a spinlock, held only to copy @geo
 * @wq:          readers and pollers waiting for expiry records
 * @eventfd:     signalled on new records; RCU, changed under @lock
 * @quota:       the opener's (user namespace, euid) accounting: this file,
 *               its live timers and @wheel_bytes are charged to it
 * @wheel_bytes: what the wheel's structures were charged, 0 before it exists
 * @timens:      the opener's time namespace offsets, fixed at open()
 * @api_done:    the handshake succeeded; set once under @lock
 * @id:          the file's name in trace events (fdinfo "htw-trace-id");
 *               fixed at open(), in @geo too so that its wheels carry it
 * @buf:         bounce buffer for read(), under @lock
 */
struct htw_file {
	struct mutex lock;	/* see @lock above */
	struct htw_wheel *wheel;
	spinlock_t geo_lock;	/* see @geo above */
	struct htw_geometry geo;
	wait_queue_head_t wq;
	struct eventfd_ctx __rcu *eventfd;
	struct htw_quota *quota;
	size_t wheel_bytes;
	struct htw_timens timens;
	bool api_done;
	u32 id;
	union {
		struct htw_wheel_expiry rec[HTW_CHUNK / 8];
		struct htw_wheel_unexpired unexp[HTW_CHUNK / 8];
	} buf;
};

/*
 * Validate a handshake request and fill in the answer.  Pure, so that the
 * KUnit suite can drive it directly.
 */
int htw_api_negotiate(struct htw_api *api)
{
	if (api->api != HTW_API_VERSION || api->flags)
		return -EINVAL;
	if (!htw_all_zero(api->reserved, ARRAY_SIZE(api->reserved)))
		return -EINVAL;
	if (api->features & ~HTW_FEATURES_ALL)
		return -EINVAL;

	api->features = HTW_FEATURES_ALL;
	api->ioctls = HTW_IOCTLS_AFTER_API;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(htw_api_negotiate);

/*
 * Called by the tick in softirq context when records became ready.  The
 * eventfd rings before poll's waiters wake: a reader woken on another CPU
 * who reads the records and then the eventfd finds this tick's ring.
 */
static void htw_file_ready(struct htw_wheel *wheel, void *owner)
{
	struct htw_file *hf = owner;
	struct eventfd_ctx *efd;

	rcu_read_lock();
	efd = rcu_dereference(hf->eventfd);
	if (efd)
		htw_eventfd_signal(efd);
	rcu_read_unlock();
	wake_up_interruptible_poll(&hf->wq, EPOLLIN | EPOLLRDNORM);
}

/* The file's wheel if it exists yet, without a lock. */
static struct htw_wheel *htw_file_peek_wheel(struct htw_file *hf)
{
	/* Pairs with the release in htw_file_wheel(): it is fully built. */
	return smp_load_acquire(&hf->wheel);
}

/*
 * Create the wheel with the file's geometry.  Its structures are charged
 * to the user before they exist: a wheel that does not fit is never
 * allocated, and the file stays as it was (HTW_IOC_SETUP still works).
 */
static struct htw_wheel *htw_file_create_wheel(struct htw_file *hf)
{
	size_t bytes = htw_wheel_footprint(&hf->geo);
	struct htw_wheel *wheel;

	lockdep_assert_held(&hf->lock);
	if (htw_quota_charge_n(hf->quota, HTW_LIMIT_WHEEL_BYTES, bytes)) {
		trace_htwheel_limit(hf->id, HTW_TRACE_LIMIT_WHEEL_BYTES, -EDQUOT);
		return ERR_PTR(-EDQUOT);
	}
	wheel = htw_wheel_create(&hf->geo, &htw_hrtimer_clock, htw_file_ready, hf,
				 GFP_KERNEL_ACCOUNT);
	if (IS_ERR(wheel)) {
		htw_quota_uncharge_n(hf->quota, HTW_LIMIT_WHEEL_BYTES, bytes);
		return wheel;
	}
	hf->wheel_bytes = bytes;
	/* Publish only once built; see htw_file_peek_wheel(). */
	smp_store_release(&hf->wheel, wheel);
	return wheel;
}

/* The file's wheel, created with the current geometry on first use. */
static struct htw_wheel *htw_file_wheel(struct htw_file *hf)
{
	struct htw_wheel *wheel = htw_file_peek_wheel(hf);

	if (wheel)
		return wheel;
	mutex_lock(&hf->lock);
	wheel = hf->wheel ?: htw_file_create_wheel(hf);
	mutex_unlock(&hf->lock);
	return wheel;
}

/*
 * A refused call whose answer was already written puts the caller's
 * request back as it was; if even that cannot be written, it stays.
 */
static void htw_restore_request(void __user *argp, const void *in, size_t size)
{
	if (copy_to_user(argp, in, size))
		pr_debug("a refused request could not be put back\n");
}

static void htw_file_set_geo(struct htw_file *hf, const struct htw_geometry *geo)
{
	lockdep_assert_held(&hf->lock);
	spin_lock(&hf->geo_lock);
	hf->geo = *geo;
	spin_unlock(&hf->geo_lock);
}

static int htw_ioc_api(struct htw_file *hf, void __user *argp)
{
	struct htw_api api, in;
	int ret;

	if (copy_from_user(&api, argp, sizeof(api)))
		return -EFAULT;
	in = api;
	ret = htw_api_negotiate(&api);
	if (ret)
		return ret;

	/*
	 * The answer first, outside the lock: a fault while writing it (the
	 * caller's page may block) must not hold up what takes @lock.
	 */
	if (copy_to_user(argp, &api, sizeof(api)))
		return -EFAULT;
	mutex_lock(&hf->lock);
	if (hf->api_done)
		ret = -EBUSY;
	else	/* Pairs with the READ_ONCE() in htw_char_ioctl(), htw_char_read(). */
		WRITE_ONCE(hf->api_done, true);
	mutex_unlock(&hf->lock);
	if (ret)
		htw_restore_request(argp, &in, sizeof(in));
	return ret;
}

static void htw_setup_answer(struct htw_setup *setup,
			     const struct htw_geometry *geo)
{
	memset(setup, 0, sizeof(*setup));
	setup->tick_ns = geo->tick_ns;
	setup->slots = geo->slots;
	setup->clockid = geo->clockid;
	setup->max_pending = geo->max_pending;
	setup->levels = geo->levels;
}

static int htw_ioc_setup(struct htw_file *hf, void __user *argp)
{
	struct htw_geometry geo = {};
	struct htw_setup setup, in;
	int ret;

	if (copy_from_user(&setup, argp, sizeof(setup)))
		return -EFAULT;
	in = setup;
	if (setup.flags ||
	    !htw_all_zero(setup.reserved, ARRAY_SIZE(setup.reserved)))
		return -EINVAL;
	if (setup.max_pending > READ_ONCE(max_pending)) {
		trace_htwheel_limit(hf->id, HTW_TRACE_LIMIT_MAX_PENDING, -EINVAL);
		return -EINVAL;
	}
	geo.tick_ns = setup.tick_ns ?: READ_ONCE(default_tick_ns);
	geo.slots = setup.slots ?: READ_ONCE(default_slots);
	geo.clockid = setup.clockid;
	geo.max_pending = setup.max_pending ?: READ_ONCE(max_pending);
	geo.quota = hf->quota;
	geo.trace_id = hf->id;
	ret = htw_geometry_normalise(&geo);
	if (ret)
		return ret;
	htw_setup_answer(&setup, &geo);
	/* The answer outside the lock, as in htw_ioc_api(). */
	if (copy_to_user(argp, &setup, sizeof(setup)))
		return -EFAULT;

	mutex_lock(&hf->lock);
	if (hf->wheel)
		ret = -EBUSY;
	else
		htw_file_set_geo(hf, &geo);
	mutex_unlock(&hf->lock);
	if (ret)
		htw_restore_request(argp, &in, sizeof(in));
	return ret;
}

/* A bounce buffer for one step of a batch: no bigger than the batch. */
static void *htw_chunk_alloc(u32 count, size_t size)
{
	return kmalloc_array(min_t(u32, count, HTW_CHUNK), size, GFP_KERNEL);
}

/*
 * Between two steps of a loop over a user-sized array: let other tasks
 * run, and tell the loop to stop if the caller is being killed (nobody
 * waits for the rest of its work).
 */
static bool htw_step_stop(void)
{
	cond_resched();
	return fatal_signal_pending(current);
}

static int htw_copy_in_batch(void *dst, u64 uptr, size_t index, size_t n,
			     size_t size)
{
	void __user *src = u64_to_user_ptr(uptr) + index * size;

	return copy_from_user(dst, src, n * size) ? -EFAULT : 0;
}

static int htw_copy_out_batch(u64 uptr, size_t index, const void *src,
			      size_t n, size_t size)
{
	void __user *dst = u64_to_user_ptr(uptr) + index * size;

	return copy_to_user(dst, src, n * size) ? -EFAULT : 0;
}

/*
 * What a batch is checked against: the geometry the wheel has (or will
 * have), one clock reading and the opener's time namespace offset on
 * that clock; @wheel is set once the batch is valid.
 */
struct htw_check_ctx {
	struct htw_geometry geo;
	struct htw_wheel *wheel;
	s64 offset;	/* of the time namespace, on the wheel's clock */
	u64 now;
};

/*
 * First pass over a batch: read every entry and check it with @check
 * before anything changes, so that a bad entry anywhere fails the whole
 * call with nothing done.  With @writable, also write each step back
 * unchanged: an array whose results could not be stored is refused
 * before anything is done rather than after.
 */
static int htw_batch_validate(void *buf, u64 uptr, u32 count, size_t size,
			      int (*check)(const void *entry,
					   const struct htw_check_ctx *ctx),
			      const struct htw_check_ctx *ctx, bool writable)
{
	u32 done, i;
	int ret;

	for (done = 0; done < count; done += HTW_CHUNK) {
		u32 n = min_t(u32, count - done, HTW_CHUNK);

		if (done && htw_step_stop())
			return -EINTR;	/* nothing was done yet */
		ret = htw_copy_in_batch(buf, uptr, done, n, size);
		for (i = 0; !ret && i < n; i++)
			ret = check(buf + i * size, ctx);
		if (!ret && writable)
			ret = htw_copy_out_batch(uptr, done, buf, n, size);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * The header HTW_IOC_SCHEDULE, HTW_IOC_CANCEL and HTW_IOC_REARM share:
 * flags, padding and reserved words zero, a count in range and an array
 * user space can reach.  Returns the bounce buffer for the batch's steps
 * (htw_chunk_alloc(); the caller kfree()s it), or ERR_PTR(-EINVAL,
 * -EFAULT or -ENOMEM).
 */
static void *htw_batch_begin(u32 flags, u32 pad, const __u64 *reserved,
			     size_t nreserved, u32 count, u64 uptr, size_t size)
{
	void *buf;

	if (flags || pad || !htw_all_zero(reserved, nreserved))
		return ERR_PTR(-EINVAL);
	if (!count || count > HTW_BATCH_MAX)
		return ERR_PTR(-EINVAL);
	if (!access_ok(u64_to_user_ptr(uptr), array_size(count, size)))
		return ERR_PTR(-EFAULT);
	buf = htw_chunk_alloc(count, size);
	return buf ?: ERR_PTR(-ENOMEM);
}

/*
 * An entry's @expires as an absolute deadline on the host's clock: with
 * HTW_TIMER_ABSTIME a time in the opener's time namespace, else a delay
 * from the batch's one clock reading.  -EOVERFLOW if the delay does not fit.
 */
static int htw_expires_to_deadline(u64 expires, u32 flags,
				   const struct htw_check_ctx *ctx, u64 *deadline)
{
	if (flags & HTW_TIMER_ABSTIME)
		*deadline = htw_timens_to_host(expires, ctx->offset);
	else if (check_add_overflow(ctx->now, expires, deadline))
		return -EOVERFLOW;
	return 0;
}

/*
 * The one check of a schedule entry, and its translation into what the
 * wheel takes: flags the kernel knows, padding zero, a relative delay
 * that fits, and the wheel's own rule (htw_spec_check()).  Both passes of
 * HTW_IOC_SCHEDULE go through it, since user memory may change between
 * them.
 */
static int htw_entry_to_spec(const struct htw_timer_entry *e,
			     const struct htw_check_ctx *ctx,
			     struct htw_timer_spec *spec)
{
	if (e->flags & ~HTW_TIMER_FLAGS_ALL || e->pad)
		return -EINVAL;
	spec->cookie = e->cookie;
	spec->period_ns = e->period_ns;
	spec->slack_ns = e->slack_ns;
	if (htw_expires_to_deadline(e->expires, e->flags, ctx, &spec->deadline_ns))
		return -EOVERFLOW;
	return htw_spec_check(&ctx->geo, spec);
}

static int htw_timer_entry_check(const void *entry,
				 const struct htw_check_ctx *ctx)
{
	struct htw_timer_spec spec;

	return htw_entry_to_spec(entry, ctx, &spec);
}

/* Schedule a validated chunk; returns how many, or -errno if none. */
static long htw_ioc_schedule_chunk(const struct htw_check_ctx *ctx,
				   struct htw_timer_entry *e, u32 n)
{
	struct htw_timer_spec spec;
	int ret = 0;
	u32 i;

	for (i = 0; i < n; i++) {
		ret = htw_entry_to_spec(&e[i], ctx, &spec);
		if (!ret)
			ret = htw_wheel_schedule(ctx->wheel, &spec, &e[i].handle);
		if (ret)
			break;
	}
	/* Not "i ? i : ret": that would convert ret to unsigned. */
	if (i)
		return i;
	return ret;
}

static void htw_ioc_schedule_undo(struct htw_wheel *wheel,
				  const struct htw_timer_entry *e, u32 n)
{
	while (n--)
		htw_wheel_unschedule(wheel, e[n].handle);
}

/* Schedule every entry of a validated batch; returns how many. */
static long htw_ioc_schedule_batch(const struct htw_check_ctx *ctx,
				   struct htw_timer_entry *e, u64 uptr, u32 count)
{
	long ret = 0;
	u32 done;

	for (done = 0; done < count; done += ret) {
		u32 n = min_t(u32, count - done, HTW_CHUNK);

		/* Killed: report what is done, as a limit part way would. */
		if (done && htw_step_stop())
			break;
		ret = htw_copy_in_batch(e, uptr, done, n, sizeof(*e));
		if (!ret)
			ret = htw_ioc_schedule_chunk(ctx, e, n);
		if (ret <= 0)
			break;
		/* Timers whose handles cannot be returned must not stay. */
		if (htw_copy_out_batch(uptr, done, e, ret, sizeof(*e))) {
			htw_ioc_schedule_undo(ctx->wheel, e, ret);
			ret = -EFAULT;
			break;
		}
		if (ret < n) {
			done += ret;
			break;
		}
	}
	return done ? done : ret;
}

/* The geometry of the file's wheel, or of the wheel it will get. */
static void htw_file_geometry(struct htw_file *hf, struct htw_geometry *geo)
{
	struct htw_wheel *wheel = htw_file_peek_wheel(hf);

	if (wheel) {
		htw_wheel_geometry(wheel, geo);
		return;
	}
	spin_lock(&hf->geo_lock);
	*geo = hf->geo;
	spin_unlock(&hf->geo_lock);
}

/*
 * Check the whole batch, then get the wheel: a refused batch must not
 * create it (that would lock out HTW_IOC_SETUP).  If a concurrent setup
 * changed the geometry meanwhile, check again against the wheel's own.
 */
static int htw_ioc_schedule_prepare(struct htw_file *hf, struct htw_check_ctx *ctx,
				    struct htw_timer_entry *e,
				    const struct htw_schedule *req)
{
	struct htw_geometry now_geo;
	int ret, tries;

	htw_file_geometry(hf, &ctx->geo);
	for (tries = 0; tries < 2; tries++) {
		ctx->offset = htw_timens_offset(&hf->timens, ctx->geo.clockid);
		/* One clock reading for the batch: its delays share one origin. */
		ctx->now = htw_clock_now(ctx->geo.clockid);
		ret = htw_batch_validate(e, req->entries, req->count, sizeof(*e),
					 htw_timer_entry_check, ctx, false);
		if (ret)
			return ret;
		ctx->wheel = htw_file_wheel(hf);
		if (IS_ERR(ctx->wheel))
			return PTR_ERR(ctx->wheel);
		htw_wheel_geometry(ctx->wheel, &now_geo);
		if (now_geo.clockid == ctx->geo.clockid &&
		    now_geo.tick_ns == ctx->geo.tick_ns)
			return 0;
		ctx->geo = now_geo;
	}
	return -EBUSY;	/* unreachable: a wheel's geometry never changes */
}

static long htw_ioc_schedule(struct htw_file *hf, void __user *argp)
{
	struct htw_schedule __user *ureq = argp;
	struct htw_timer_entry *e;
	struct htw_check_ctx ctx;
	struct htw_schedule req;
	long ret;

	if (copy_from_user(&req, ureq, sizeof(req)))
		return -EFAULT;
	e = htw_batch_begin(req.flags, req.pad, req.reserved,
			    ARRAY_SIZE(req.reserved), req.count, req.entries,
			    sizeof(*e));
	if (IS_ERR(e)) {
		ret = PTR_ERR(e);
		goto out;
	}

	ret = htw_ioc_schedule_prepare(hf, &ctx, e, &req);
	if (!ret)
		ret = htw_ioc_schedule_batch(&ctx, e, req.entries, req.count);
	kfree(e);
	/* The count is also the return value: a failed write-back loses nothing. */
	if (ret > 0)
		put_user((u32)ret, &ureq->done);
out:
	trace_htwheel_schedule(hf->id, req.count, ret > 0 ? ret : 0,
			       ret < 0 ? ret : 0);
	return ret;
}

static int htw_cancel_entry_check(const void *entry,
				  const struct htw_check_ctx *ctx)
{
	const struct htw_cancel_entry *e = entry;

	return e->pad ? -EINVAL : 0;
}

/*
 * Cancel a validated batch; *@cancelled counts the HTW_CANCELLED results.
 * Returns 0, -EFAULT, or -EINTR when the caller is being killed: the
 * entries before that point are done and *@cancelled counts them.
 */
static int htw_ioc_cancel_batch(struct htw_file *hf, struct htw_wheel *wheel,
				struct htw_cancel_entry *e, u64 uptr, u32 count,
				u32 *cancelled)
{
	u32 done, i;

	*cancelled = 0;
	for (done = 0; done < count; done += HTW_CHUNK) {
		u32 n = min_t(u32, count - done, HTW_CHUNK);

		if (done && htw_step_stop())
			return -EINTR;
		if (htw_copy_in_batch(e, uptr, done, n, sizeof(*e)))
			return -EFAULT;
		for (i = 0; i < n; i++) {
			e[i].result = wheel ? htw_wheel_cancel(wheel, e[i].handle) :
					      HTW_CANCEL_UNKNOWN;
			trace_htwheel_cancel(hf->id, e[i].handle, e[i].result);
			*cancelled += e[i].result == HTW_WHEEL_CANCEL_OK;
		}
		if (htw_copy_out_batch(uptr, done, e, n, sizeof(*e)))
			return -EFAULT;
	}
	return 0;
}

static long htw_ioc_cancel(struct htw_file *hf, void __user *argp)
{
	struct htw_cancel __user *ureq = argp;
	struct htw_cancel_entry *e;
	struct htw_wheel *wheel;
	struct htw_cancel req;
	u32 cancelled;
	long ret;

	if (copy_from_user(&req, ureq, sizeof(req)))
		return -EFAULT;
	e = htw_batch_begin(req.flags, req.pad, req.reserved,
			    ARRAY_SIZE(req.reserved), req.count, req.entries,
			    sizeof(*e));
	if (IS_ERR(e))
		return PTR_ERR(e);
	/* No wheel yet: no timer either, and cancel does not create one. */
	wheel = htw_file_peek_wheel(hf);

	ret = htw_batch_validate(e, req.entries, req.count, sizeof(*e),
				 htw_cancel_entry_check, NULL, true);
	/* The count is written after the cancels: make sure it can be. */
	if (!ret && put_user(0U, &ureq->cancelled))
		ret = -EFAULT;
	if (!ret) {
		ret = htw_ioc_cancel_batch(hf, wheel, e, req.entries, req.count,
					   &cancelled);
		/* Killed part way: the cancels done are reported all the same. */
		if (ret != -EFAULT && put_user(cancelled, &ureq->cancelled))
			ret = -EFAULT;
	}
	kfree(e);
	return ret;
}

/*
 * The one check of a re-arm entry and its deadline: flags the kernel
 * knows and a relative delay that fits.  Both passes of HTW_IOC_REARM go
 * through it, since user memory may change between them.
 */
static int htw_rearm_entry_deadline(const struct htw_rearm_entry *e,
				    const struct htw_check_ctx *ctx, u64 *deadline)
{
	if (e->flags & ~HTW_TIMER_ABSTIME)
		return -EINVAL;
	return htw_expires_to_deadline(e->expires, e->flags, ctx, deadline);
}

static int htw_rearm_entry_check(const void *entry,
				 const struct htw_check_ctx *ctx)
{
	u64 deadline;

	return htw_rearm_entry_deadline(entry, ctx, &deadline);
}

/*
 * Re-arm one timer and store its HTW_REARM_* result.  Most calls take
 * only bucket locks; a timer whose record is queued needs hf->lock to
 * take that record back, since read() and drain walk the ready queue
 * under it, and a move while a drain runs waits for the drain on it.
 * Returns 0, or -EINTR if the caller was killed waiting for it.
 */
static int htw_rearm_one(struct htw_file *hf, struct htw_wheel *wheel,
			 u64 handle, u64 deadline, u32 *result)
{
	enum htw_rearm_status st;

	if (!wheel) {
		*result = HTW_REARM_UNKNOWN;	/* no wheel: no timer either */
		return 0;
	}
	st = htw_wheel_rearm(wheel, handle, deadline, 0);
	if (st == HTW_WHEEL_REARM_SERIALISE) {
		if (mutex_lock_killable(&hf->lock))
			return -EINTR;
		/* Read meanwhile, the record may be gone: this call says so. */
		st = htw_wheel_rearm(wheel, handle, deadline,
				     HTW_WHEEL_REARM_WITHDRAW);
		mutex_unlock(&hf->lock);
	}
	/* The statuses other than QUEUED are the uapi's results. */
	*result = st;
	return 0;
}

/*
 * Re-arm the entries of a chunk; returns how many got a result, all @n
 * unless an entry became invalid since the first pass or the caller was
 * killed, and then *@err says which.
 */
static u32 htw_ioc_rearm_chunk(struct htw_file *hf,
			       const struct htw_check_ctx *ctx,
			       struct htw_rearm_entry *e, u32 n, int *err)
{
	u64 deadline;
	u32 i;

	*err = 0;
	for (i = 0; i < n; i++) {
		*err = htw_rearm_entry_deadline(&e[i], ctx, &deadline);
		if (!*err)
			*err = htw_rearm_one(hf, ctx->wheel, e[i].handle,
					     deadline, &e[i].result);
		if (*err)
			break;
	}
	return i;
}

/*
 * Re-arm a validated batch; *@rearmed counts the HTW_REARMED results.
 * Returns 0, or -EFAULT, -EINVAL (an entry changed since it was checked)
 * or -EINTR (the caller is being killed): the entries before that point
 * are done, their results written and counted in *@rearmed.
 */
static int htw_ioc_rearm_batch(struct htw_file *hf,
			       const struct htw_check_ctx *ctx,
			       struct htw_rearm_entry *e, u64 uptr, u32 count,
			       u32 *rearmed)
{
	int ret = 0;
	u32 done, i, n;

	*rearmed = 0;
	for (done = 0; done < count && !ret; done += HTW_CHUNK) {
		if (done && htw_step_stop())
			return -EINTR;
		n = min_t(u32, count - done, HTW_CHUNK);
		if (htw_copy_in_batch(e, uptr, done, n, sizeof(*e)))
			return -EFAULT;
		n = htw_ioc_rearm_chunk(hf, ctx, e, n, &ret);
		for (i = 0; i < n; i++)
			*rearmed += e[i].result == HTW_REARMED;
		if (htw_copy_out_batch(uptr, done, e, n, sizeof(*e)))
			return -EFAULT;
	}
	return ret;
}

/*
 * What a re-arm batch is checked against.  It never creates the wheel:
 * without one the file has no timer, and every result is unknown.
 */
static void htw_ioc_rearm_prepare(struct htw_file *hf, struct htw_check_ctx *ctx)
{
	ctx->wheel = htw_file_peek_wheel(hf);
	/* The wheel's own geometry if it exists: it never changes. */
	htw_file_geometry(hf, &ctx->geo);
	ctx->offset = htw_timens_offset(&hf->timens, ctx->geo.clockid);
	/* One clock reading for the batch: its delays share one origin. */
	ctx->now = htw_clock_now(ctx->geo.clockid);
}

static long htw_ioc_rearm(struct htw_file *hf, void __user *argp)
{
	struct htw_rearm __user *ureq = argp;
	struct htw_rearm_entry *e;
	struct htw_check_ctx ctx;
	struct htw_rearm req;
	u32 rearmed;
	long ret;

	if (copy_from_user(&req, ureq, sizeof(req)))
		return -EFAULT;
	e = htw_batch_begin(req.flags, req.pad, req.reserved,
			    ARRAY_SIZE(req.reserved), req.count, req.entries,
			    sizeof(*e));
	if (IS_ERR(e))
		return PTR_ERR(e);

	htw_ioc_rearm_prepare(hf, &ctx);
	ret = htw_batch_validate(e, req.entries, req.count, sizeof(*e),
				 htw_rearm_entry_check, &ctx, true);
	/* The count is written after the re-arms: make sure it can be. */
	if (!ret && put_user(0U, &ureq->rearmed))
		ret = -EFAULT;
	if (!ret) {
		ret = htw_ioc_rearm_batch(hf, &ctx, e, req.entries, req.count,
					  &rearmed);
		/* Stopped part way: the re-arms done are reported all the same. */
		if (ret != -EFAULT && put_user(rearmed, &ureq->rearmed))
			ret = -EFAULT;
	}
	kfree(e);
	return ret;
}

/* Copy drain descriptions out in small steps through the stack. */
static int htw_ioc_drain_copy_out(u64 uptr, const struct htw_wheel_unexpired *in,
				  size_t n)
{
	struct htw_unexpired out[16];
	size_t done, i, k;

	for (done = 0; done < n; done += k) {
		if (done && htw_step_stop())
			return -EINTR;
		k = min(n - done, ARRAY_SIZE(out));
		memset(out, 0, sizeof(out));
		for (i = 0; i < k; i++) {
			out[i].cookie = in[done + i].cookie;
			out[i].handle = in[done + i].handle;
			out[i].remaining_ns = in[done + i].remaining_ns;
		}
		if (htw_copy_out_batch(uptr, done, out, k, sizeof(out[0])))
			return -EFAULT;
	}
	return 0;
}

static long htw_ioc_drain(struct htw_file *hf, void __user *argp)
{
	struct htw_drain __user *ureq = argp;
	struct htw_wheel_unexpired *kbuf;
	struct htw_wheel *wheel;
	struct htw_drain req;
	size_t total;
	long ret;

	if (copy_from_user(&req, ureq, sizeof(req)))
		return -EFAULT;
	if (req.flags ||
	    !htw_all_zero(req.reserved, ARRAY_SIZE(req.reserved)))
		return -EINVAL;
	if (req.count > HTW_BATCH_MAX || (!req.count && req.entries))
		return -EINVAL;
	/*
	 * Make sure everything written afterwards is writable before
	 * cancelling anything: a drain that cannot report must not happen.
	 */
	if (req.count && clear_user(u64_to_user_ptr(req.entries),
				    array_size(req.count, sizeof(struct htw_unexpired))))
		return -EFAULT;
	if (put_user(0ULL, &ureq->drained))
		return -EFAULT;
	wheel = htw_file_peek_wheel(hf);
	if (!wheel)
		return 0;
	/* Sized by the caller's room, charged to the caller's memcg. */
	kbuf = kvmalloc_array(max_t(u32, req.count, 1), sizeof(*kbuf),
			      GFP_KERNEL_ACCOUNT);
	if (!kbuf)
		return -ENOMEM;
	/* Drains must not interleave with read()'s peek/consume pairs. */
	if (mutex_lock_killable(&hf->lock)) {
		kvfree(kbuf);
		return -EINTR;
	}
	total = htw_wheel_drain(wheel, kbuf, req.count);
	mutex_unlock(&hf->lock);
	trace_htwheel_drain(hf->id, total);
	ret = htw_ioc_drain_copy_out(req.entries, kbuf, min_t(size_t, total, req.count));
	if (!ret && put_user((u64)total, &ureq->drained))
		ret = -EFAULT;
	kvfree(kbuf);
	return ret;
}

static void htw_stats_fill(struct htw_stats *st, const struct htw_geometry *geo,
			   const struct htw_wheel_stats *ws)
{
	memset(st, 0, sizeof(*st));
	st->clockid = geo->clockid;
	st->tick_ns = geo->tick_ns;
	st->slots = geo->slots;
	st->levels = geo->levels;
	st->max_pending = geo->max_pending;
	if (!ws)
		return;
	st->pending = ws->pending;
	st->ready = ws->ready;
	st->scheduled = ws->scheduled;
	st->fired = ws->fired;
	st->cancelled = ws->cancelled;
	st->cascaded = ws->cascaded;
	st->tick_wakeups = ws->tick_wakeups;
	st->max_late_ns = ws->max_late_ns;
	BUILD_BUG_ON(ARRAY_SIZE(st->late_hist) != ARRAY_SIZE(ws->late_hist));
	memcpy(st->late_hist, ws->late_hist, sizeof(st->late_hist));
}

/* Statistics of a file whose wheel may not exist yet. */
static void htw_file_stats(struct htw_file *hf, struct htw_stats *st)
{
	struct htw_wheel *wheel = htw_file_peek_wheel(hf);
	struct htw_wheel_stats ws;
	struct htw_geometry geo;

	if (!wheel) {
		spin_lock(&hf->geo_lock);
		geo = hf->geo;
		spin_unlock(&hf->geo_lock);
		htw_stats_fill(st, &geo, NULL);
		return;
	}
	htw_wheel_geometry(wheel, &geo);
	htw_wheel_get_stats(wheel, &ws);
	htw_stats_fill(st, &geo, &ws);
}

static long htw_ioc_stats(struct htw_file *hf, void __user *argp)
{
	struct htw_stats st;
	u32 flags;

	if (get_user(flags, (u32 __user *)argp))
		return -EFAULT;
	if (flags)
		return -EINVAL;
	htw_file_stats(hf, &st);
	return copy_to_user(argp, &st, sizeof(st)) ? -EFAULT : 0;
}

static void htw_eventfd_swap(struct htw_file *hf, struct eventfd_ctx *ctx)
{
	struct eventfd_ctx *old;

	lockdep_assert_held(&hf->lock);
	old = rcu_replace_pointer(hf->eventfd, ctx, lockdep_is_held(&hf->lock));
	if (old) {
		/* The tick may be signalling the old one right now. */
		synchronize_rcu();
		eventfd_ctx_put(old);
	}
}

static long htw_ioc_set_eventfd(struct htw_file *hf, void __user *argp)
{
	struct eventfd_ctx *ctx = NULL;
	struct htw_eventfd req;

	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	if (req.flags || req.reserved || req.fd < -1)
		return -EINVAL;
	if (req.fd >= 0) {
		ctx = eventfd_ctx_fdget(req.fd);
		if (IS_ERR(ctx))
			return PTR_ERR(ctx);
	}
	mutex_lock(&hf->lock);
	htw_eventfd_swap(hf, ctx);
	mutex_unlock(&hf->lock);
	return 0;
}

/*
 * The geometry of a table of @entries slots: the file's,
 * so the file's wheel is made first, as a first schedule would make it
 * (HTW_IOC_SETUP is over then), with room for the slots.  0, -EINVAL for
 * 0 or more slots than max_pending, or the wheel's error.
 */
static int htw_file_table_geometry(struct htw_file *hf, u32 entries,
				   struct htw_geometry *geo)
{
	struct htw_wheel *wheel;

	if (!entries)
		return -EINVAL;
	if (entries > min_t(u64, READ_ONCE(max_pending), HTW_MAX_PENDING)) {
		trace_htwheel_limit(hf->id, HTW_TRACE_LIMIT_MAX_PENDING, -EINVAL);
		return -EINVAL;
	}
	wheel = htw_file_wheel(hf);
	if (IS_ERR(wheel))
		return PTR_ERR(wheel);
	htw_wheel_geometry(wheel, geo);
	geo->max_pending = entries;
	return 0;
}

/*
 * A table, an object of its own with the file's geometry, clock, time
 * namespace and user; the file keeps nothing of it.
 */
static long htw_ioc_table2_create(struct htw_file *hf, void __user *argp)
{
	struct htw_table2_setup ts;
	struct htw_geometry geo;
	int ret;

	if (copy_from_user(&ts, argp, sizeof(ts)))
		return -EFAULT;
	if (ts.flags || !htw_all_zero(ts.reserved, ARRAY_SIZE(ts.reserved)))
		return -EINVAL;
	ret = htw_file_table_geometry(hf, ts.entries, &geo);
	if (ret)
		return ret;
	return htw_table_obj_create(&geo, hf->quota, &hf->timens, &ts, argp);
}

static bool htw_file_has_ready(struct htw_file *hf)
{
	struct htw_wheel *wheel = htw_file_peek_wheel(hf);

	return wheel && htw_wheel_has_ready(wheel);
}

/* A record for user space, its times on the opener's clock (@offset). */
static void htw_expiry_to_user(struct htw_expiry *out,
			       const struct htw_wheel_expiry *in, s64 offset)
{
	memset(out, 0, sizeof(*out));
	out->cookie = in->cookie;
	out->handle = in->handle;
	out->deadline_ns = htw_timens_from_host(in->deadline_ns, offset);
	out->expired_ns = htw_timens_from_host(in->fired_ns, offset);
	out->overrun = in->overrun;
	out->flags = in->flags & HTW_WHEEL_EXPIRY_PERIODIC ? HTW_EXPIRY_PERIODIC : 0;
}

/*
 * Copy out up to @max records; the caller holds hf->lock.  A caller that
 * is being killed gets what was copied so far.
 */
static ssize_t htw_char_read_some(struct htw_file *hf, struct htw_wheel *wheel,
				  char __user *buf, size_t max)
{
	s64 offset = htw_timens_offset(&hf->timens, hf->geo.clockid);
	struct htw_expiry out[8];
	size_t n, i, copied, done = 0;
	unsigned long left;

	lockdep_assert_held(&hf->lock);
	while (done < max) {
		if (done && htw_step_stop())
			break;
		n = htw_wheel_peek_ready(wheel, hf->buf.rec,
					 min(max - done, ARRAY_SIZE(out)));
		if (!n)
			break;
		for (i = 0; i < n; i++)
			htw_expiry_to_user(&out[i], &hf->buf.rec[i], offset);
		left = copy_to_user(buf + done * sizeof(*out), out, n * sizeof(*out));
		/* Whole records that reached the buffer count; the rest stay queued. */
		copied = n - DIV_ROUND_UP(left, sizeof(*out));
		htw_wheel_consume_ready(wheel, hf->buf.rec, copied);
		done += copied;
		if (left)
			return done ? done : -EFAULT;
	}
	return done;
}

static ssize_t htw_char_read(struct file *file, char __user *buf, size_t count,
			     loff_t *ppos)
{
	struct htw_file *hf = file->private_data;
	size_t max = count / sizeof(struct htw_expiry);
	struct htw_wheel *wheel;
	ssize_t ret;

	if (!READ_ONCE(hf->api_done))
		return -EBADFD;
	if (!max)
		return -EINVAL;
	for (;;) {
		if (mutex_lock_interruptible(&hf->lock))
			return -ERESTARTSYS;
		wheel = hf->wheel;
		ret = wheel ? htw_char_read_some(hf, wheel, buf, max) : 0;
		mutex_unlock(&hf->lock);
		if (ret > 0)
			trace_htwheel_deliver(hf->id, HTW_TRACE_VIA_READ, ret);
		if (ret)
			return ret < 0 ? ret : ret * sizeof(struct htw_expiry);
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		ret = wait_event_interruptible(hf->wq, htw_file_has_ready(hf));
		if (ret)
			return ret;
	}
}

static __poll_t htw_char_poll(struct file *file, poll_table *wait)
{
	struct htw_file *hf = file->private_data;

	/*
	 * Register on the wait queue before looking: a record that becomes
	 * ready after the look wakes us, one before it is seen by the look.
	 */
	poll_wait(file, &hf->wq, wait);
	if (htw_file_has_ready(hf))
		return EPOLLIN | EPOLLRDNORM;
	return 0;
}

static void htw_char_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct htw_file *hf = file->private_data;
	struct htw_stats st;

	htw_file_stats(hf, &st);
	seq_printf(m, "htw-api:\t%d\n", READ_ONCE(hf->api_done));
	seq_printf(m, "htw-clockid:\t%u\n", st.clockid);
	seq_printf(m, "htw-tick-ns:\t%llu\n", st.tick_ns);
	seq_printf(m, "htw-slots:\t%u\n", st.slots);
	seq_printf(m, "htw-levels:\t%u\n", st.levels);
	seq_printf(m, "htw-max-pending:\t%llu\n", st.max_pending);
	seq_printf(m, "htw-pending:\t%llu\n", st.pending);
	seq_printf(m, "htw-ready:\t%llu\n", st.ready);
	seq_printf(m, "htw-trace-id:\t%u\n", hf->id);
}

/*
 * The ioctls that take absolute times in, or set a table up to read them
 * from memory: a task whose time namespace is not like the opener's would
 * mean other instants by them, and timers would fire early.  It gets
 * EXDEV, as a file used across time namespaces.
 */
static bool htw_ioctl_takes_times(unsigned int cmd)
{
	return cmd == HTW_IOC_SCHEDULE || cmd == HTW_IOC_REARM ||
	       cmd == HTW_IOC_TABLE2_CREATE;
}

/* Ioctls other than the handshake, as known to this file. */
static bool htw_known_ioctl(unsigned int cmd)
{
	return _IOC_TYPE(cmd) == HTW_IOC_MAGIC && _IOC_NR(cmd) < 64 &&
	       (HTW_IOCTLS_AFTER_API & BIT_ULL(_IOC_NR(cmd)));
}

static long htw_char_ioctl(struct file *file, unsigned int cmd, unsigned long parm)
{
	struct htw_file *hf = file->private_data;
	void __user *argp = (void __user *)parm;

	if (cmd != HTW_IOC_API && htw_known_ioctl(cmd) &&
	    !READ_ONCE(hf->api_done))
		return -EBADFD;
	if (htw_ioctl_takes_times(cmd) && !htw_timens_is_current(&hf->timens))
		return -EXDEV;

	switch (cmd) {
	case HTW_IOC_API:
		return htw_ioc_api(hf, argp);
	case HTW_IOC_SETUP:
		return htw_ioc_setup(hf, argp);
	case HTW_IOC_SCHEDULE:
		return htw_ioc_schedule(hf, argp);
	case HTW_IOC_CANCEL:
		return htw_ioc_cancel(hf, argp);
	case HTW_IOC_REARM:
		return htw_ioc_rearm(hf, argp);
	case HTW_IOC_DRAIN:
		return htw_ioc_drain(hf, argp);
	case HTW_IOC_STATS:
		return htw_ioc_stats(hf, argp);
	case HTW_IOC_SET_EVENTFD:
		return htw_ioc_set_eventfd(hf, argp);
	case HTW_IOC_TABLE2_CREATE:
		return htw_ioc_table2_create(hf, argp);
	case HTW_IOC_NS_LIMITS_GET:
		return htw_ioc_ns_limits_get(argp);
	case HTW_IOC_NS_LIMITS_SET:
		return htw_ioc_ns_limits_set(argp);
	default:
		return -ENOIOCTLCMD;
	}
}

/* The geometry of a new file, from the module's defaults. */
static int htw_file_default_geometry(struct htw_geometry *geo)
{
	geo->tick_ns = READ_ONCE(default_tick_ns);
	geo->slots = READ_ONCE(default_slots);
	geo->clockid = CLOCK_MONOTONIC;
	geo->max_pending = READ_ONCE(max_pending);
	if (!htw_geometry_normalise(geo))
		return 0;
	/* Module parameters may be nonsense: fall back to what always works. */
	geo->tick_ns = max_t(u64, NSEC_PER_MSEC, hrtimer_resolution);
	geo->slots = 512;
	geo->max_pending = clamp_t(u64, geo->max_pending, 1, HTW_MAX_PENDING);
	return WARN_ON_ONCE(htw_geometry_normalise(geo)) ? -EINVAL : 0;
}

/*
 * A file's trace id: a random non-zero number, unique among the open
 * files (the ids in use are kept here), so that it tells nobody how many
 * files others opened, or when; 0 is left for wheels no file owns.
 */
static DEFINE_XARRAY(htw_trace_ids);

static int htw_trace_id_get(struct htw_file *hf)
{
	int tries, ret = -EBUSY;
	u32 id;

	/* Four billion ids: a second try is already rare. */
	for (tries = 0; tries < 8 && ret == -EBUSY; tries++) {
		id = get_random_u32();
		if (!id)
			continue;
		ret = xa_insert(&htw_trace_ids, id, hf, GFP_KERNEL_ACCOUNT);
		if (!ret)
			hf->id = id;
	}
	return ret;
}

static void htw_trace_id_put(struct htw_file *hf)
{
	xa_erase(&htw_trace_ids, hf->id);
}

/*
 * Charge the new file to its opener: the user namespace and effective
 * uid of the task calling open(), whoever uses the file later.
 */
static int htw_file_account(struct htw_file *hf)
{
	hf->quota = htw_quota_get(current_user_ns(), current_euid());
	if (!hf->quota)
		return -ENOMEM;
	if (htw_quota_charge_n(hf->quota, HTW_LIMIT_INSTANCES, 1)) {
		htw_quota_put(hf->quota);
		trace_htwheel_limit(hf->id, HTW_TRACE_LIMIT_INSTANCES, -EMFILE);
		return -EMFILE;
	}
	return 0;
}

/* After the wheel is gone: its timers were uncharged as they were freed. */
static void htw_file_unaccount(struct htw_file *hf)
{
	htw_quota_uncharge_n(hf->quota, HTW_LIMIT_WHEEL_BYTES, hf->wheel_bytes);
	htw_quota_uncharge_n(hf->quota, HTW_LIMIT_INSTANCES, 1);
	htw_quota_put(hf->quota);
}

static int htw_char_open(struct inode *inode, struct file *file)
{
	struct htw_file *hf;
	int ret;

	hf = kzalloc(sizeof(*hf), GFP_KERNEL_ACCOUNT);
	if (!hf)
		return -ENOMEM;
	/* First, so that a refused open() is traced with the id it had. */
	ret = htw_trace_id_get(hf);
	if (ret) {
		kfree(hf);
		return ret;
	}
	ret = htw_file_default_geometry(&hf->geo);
	if (!ret)
		ret = htw_file_account(hf);
	if (ret) {
		htw_trace_id_put(hf);
		kfree(hf);
		return ret;
	}
	hf->geo.quota = hf->quota;
	hf->geo.trace_id = hf->id;
	htw_timens_capture(&hf->timens);
	mutex_init(&hf->lock);
	spin_lock_init(&hf->geo_lock);
	init_waitqueue_head(&hf->wq);
	file->private_data = hf;
	return stream_open(inode, file);
}

static int htw_char_release(struct inode *inode, struct file *file)
{
	struct htw_file *hf = file->private_data;

	/* Stops the ticks synchronously: no ready callback runs after this. */
	if (hf->wheel)
		htw_wheel_destroy(hf->wheel);
	mutex_lock(&hf->lock);
	htw_eventfd_swap(hf, NULL);
	mutex_unlock(&hf->lock);
	htw_file_unaccount(hf);
	htw_trace_id_put(hf);
	mutex_destroy(&hf->lock);
	kfree(hf);
	return 0;
}

static const struct file_operations htw_char_fops = {
	.owner		= THIS_MODULE,
	.open		= htw_char_open,
	.release	= htw_char_release,
	.read		= htw_char_read,
	.poll		= htw_char_poll,
	.unlocked_ioctl	= htw_char_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.show_fdinfo	= htw_char_show_fdinfo,
};

/*
 * The device node's mode, fixed when the module loads: `options htwheel
 * mode=0660` in modprobe.d narrows it from the start, with no window
 * before udev's rule runs.  Permission bits only: anything else (setuid,
 * sticky, above 0777) refuses the load with EINVAL.
 */
static ushort mode = 0666;
module_param(mode, ushort, 0444);
MODULE_PARM_DESC(mode, "Mode of /dev/htwheel, permission bits only (default 0666)");

static struct miscdevice htw_misc = {
	.minor		= MISC_DYNAMIC_MINOR,
	.name		= HTW_NAME,
	.fops		= &htw_char_fops,
};

int htw_dev_register(void)
{
	BUILD_BUG_ON(HTW_WHEEL_CANCEL_OK != HTW_CANCELLED);
	BUILD_BUG_ON(HTW_WHEEL_CANCEL_FIRED != HTW_CANCEL_FIRED);
	BUILD_BUG_ON(HTW_WHEEL_CANCEL_UNKNOWN != HTW_CANCEL_UNKNOWN);
	BUILD_BUG_ON(HTW_WHEEL_REARM_PENDING != HTW_REARMED);
	BUILD_BUG_ON(HTW_WHEEL_REARM_FIRED != HTW_REARM_FIRED);
	BUILD_BUG_ON(HTW_WHEEL_REARM_UNKNOWN != HTW_REARM_UNKNOWN);
	BUILD_BUG_ON(ARRAY_SIZE(((struct htw_wheel_stats *)0)->late_hist) != HTW_LATE_BUCKETS);
	BUILD_BUG_ON(sizeof(struct htw_api) != 64);
	BUILD_BUG_ON(sizeof(struct htw_table_stats) != 128);
	BUILD_BUG_ON(sizeof(struct htw_ns_limits) != 96);
	BUILD_BUG_ON(sizeof(struct htw_table2_setup) != 80);
	BUILD_BUG_ON(HTW_LIMIT_INSTANCES != HTW_NS_INSTANCES);
	BUILD_BUG_ON(HTW_LIMIT_TIMERS != HTW_NS_TIMERS);
	BUILD_BUG_ON(HTW_LIMIT_WHEEL_BYTES != HTW_NS_WHEEL_BYTES);
	BUILD_BUG_ON(HTW_LIMIT_COUNT != HTW_NS_LIMITS);
	if (mode & ~0777) {
		pr_err("mode=%#o: permission bits only (0 to 0777)\n", mode);
		return -EINVAL;
	}
	htw_misc.mode = mode;
	BUILD_BUG_ON(sizeof(struct htw_setup) != 64);
	BUILD_BUG_ON(sizeof(struct htw_timer_entry) != 48);
	BUILD_BUG_ON(sizeof(struct htw_schedule) != 48);
	BUILD_BUG_ON(sizeof(struct htw_cancel_entry) != 16);
	BUILD_BUG_ON(sizeof(struct htw_cancel) != 48);
	BUILD_BUG_ON(sizeof(struct htw_rearm_entry) != 24);
	BUILD_BUG_ON(sizeof(struct htw_rearm) != 48);
	BUILD_BUG_ON(sizeof(struct htw_unexpired) != 32);
	BUILD_BUG_ON(sizeof(struct htw_drain) != 48);
	BUILD_BUG_ON(sizeof(struct htw_stats) != 384);
	BUILD_BUG_ON(sizeof(struct htw_eventfd) != 16);
	BUILD_BUG_ON(sizeof(struct htw_expiry) != 48);
	return misc_register(&htw_misc);
}

void htw_dev_unregister(void)
{
	misc_deregister(&htw_misc);
}
