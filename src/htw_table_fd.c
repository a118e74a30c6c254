// SPDX-License-Identifier: GPL-2.0
/*
 * htwheel table object: a version 2 timer table as a file of its own
 * (HTW_IOC_TABLE2_CREATE), in the manner of ntsync's objects: the device
 * file's ioctl makes the object and returns a new descriptor, whose
 * mmap(), poll(), ioctls and fdinfo are the table's.  The object holds its
 * wheel, its charges and a reference on the user's accounting entry; the
 * device file knows nothing of it once it is made, and it lives until its
 * last descriptor and mapping are gone (a mapping holds the file).
 */
#include <linux/anon_inodes.h>
#include <linux/fcntl.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "htw_api.h"
#include "htw_compat.h"
#include "htw_limits.h"
#include "htw_table.h"
#include "htw_table_fd.h"
#include "htw_tick.h"
#include "htw_timens.h"
#include "htw_trace.h"
#include "htw_wheel.h"

/**
 * struct htw_table_obj - a timer table's file
 * @wheel:   the table's wheel; fixed
 * @quota:   the user charged, a reference held; fixed
 * @timens:  the opener's time namespace, the deadlines' clocks; fixed
 * @entries: slots, charged as live timers; fixed
 * @bytes:   what it was charged as wheel structures; fixed
 * @wq:      poll's waiters, woken when records are written
 */
struct htw_table_obj {
	struct htw_wheel *wheel;
	struct htw_quota *quota;
	struct htw_timens timens;
	u32 entries;
	size_t bytes;
	wait_queue_head_t wq;
};

/* From the tick, in softirq context: records were written. */
static void htw_table_obj_ready(struct htw_wheel *wheel, void *owner)
{
	struct htw_table_obj *obj = owner;

	wake_up_interruptible_poll(&obj->wq, EPOLLIN | EPOLLRDNORM);
}

static void htw_table_obj_free(struct htw_table_obj *obj)
{
	htw_wheel_destroy(obj->wheel);
	htw_quota_uncharge_n(obj->quota, HTW_LIMIT_WHEEL_BYTES, obj->bytes);
	htw_quota_uncharge_n(obj->quota, HTW_LIMIT_TIMERS, obj->entries);
	htw_quota_put(obj->quota);
	kfree(obj);
}

static int htw_table_obj_release(struct inode *inode, struct file *file)
{
	htw_table_obj_free(file->private_data);
	return 0;
}

static __poll_t htw_table_obj_poll(struct file *file, poll_table *wait)
{
	struct htw_table_obj *obj = file->private_data;

	/* On the queue before the look: a later record wakes us. */
	poll_wait(file, &obj->wq, wait);
	htw_wheel_table_room_made(obj->wheel);
	return htw_table_has_completions(obj->wheel) ? EPOLLIN | EPOLLRDNORM : 0;
}

static int htw_table_obj_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct htw_table_obj *obj = file->private_data;

	return htw_table_mmap(obj->wheel, vma);
}

static long htw_table_obj_ioc_stats(struct htw_table_obj *obj, void __user *argp)
{
	struct htw_table_stats ts;
	u32 flags;

	if (get_user(flags, (u32 __user *)argp))
		return -EFAULT;
	if (flags)
		return -EINVAL;
	htw_table_get_stats(obj->wheel, &ts);
	return copy_to_user(argp, &ts, sizeof(ts)) ? -EFAULT : 0;
}

static long htw_table_obj_ioctl(struct file *file, unsigned int cmd,
				unsigned long parm)
{
	struct htw_table_obj *obj = file->private_data;

	switch (cmd) {
	case HTW_IOC_TABLE2_ENTER:
		if (parm)
			return -EINVAL;
		/* Its deadlines are the opener's clocks: see htwheel.h. */
		if (!htw_timens_is_current(&obj->timens))
			return -EXDEV;
		return htw_wheel_table_enter(obj->wheel);
	case HTW_IOC_TABLE2_STATS:
		return htw_table_obj_ioc_stats(obj, (void __user *)parm);
	default:
		return -ENOTTY;
	}
}

static void htw_table_obj_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct htw_table_obj *obj = file->private_data;
	struct htw_geometry geo;
	struct htw_table_stats ts;

	htw_wheel_geometry(obj->wheel, &geo);
	htw_table_get_stats(obj->wheel, &ts);
	seq_printf(m, "htw-table-entries:\t%u\n", ts.entries);
	seq_printf(m, "htw-table-taken:\t%llu\n", ts.taken);
	seq_printf(m, "htw-table-fired:\t%llu\n", ts.fired);
	seq_printf(m, "htw-table-runs:\t%llu\n", ts.runs);
	seq_printf(m, "htw-table-consumed:\t%llu\n", ts.consumed);
	seq_printf(m, "htw-table-moved:\t%llu\n", ts.moved);
	seq_printf(m, "htw-table-budget-stops:\t%llu\n", ts.budget_stops);
	seq_printf(m, "htw-table-room-waits:\t%llu\n", ts.room_waits);
	seq_printf(m, "htw-tick-ns:\t%llu\n", geo.tick_ns);
	seq_printf(m, "htw-trace-id:\t%u\n", geo.trace_id);
}

static const struct file_operations htw_table_obj_fops = {
	.owner		= THIS_MODULE,
	.release	= htw_table_obj_release,
	.poll		= htw_table_obj_poll,
	.mmap		= htw_table_obj_mmap,
	.unlocked_ioctl	= htw_table_obj_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.show_fdinfo	= htw_table_obj_show_fdinfo,
	.llseek		= noop_llseek,
};

/* The object, charged to @quota, with its wheel; or an ERR_PTR. */
static struct htw_table_obj *htw_table_obj_new(const struct htw_geometry *geo,
					       struct htw_quota *quota,
					       const struct htw_timens *timens,
					       u32 entries)
{
	size_t bytes = htw_wheel_footprint(geo) + htw_table_bytes(entries);
	struct htw_table_obj *obj;
	int ret = -ENOMEM;

	if (htw_quota_charge_n(quota, HTW_LIMIT_TIMERS, entries)) {
		trace_htwheel_limit(geo->trace_id, HTW_TRACE_LIMIT_TIMERS, -EDQUOT);
		return ERR_PTR(-EDQUOT);
	}
	if (htw_quota_charge_n(quota, HTW_LIMIT_WHEEL_BYTES, bytes)) {
		trace_htwheel_limit(geo->trace_id, HTW_TRACE_LIMIT_WHEEL_BYTES, -EDQUOT);
		ret = -EDQUOT;
		goto out_timers;
	}
	obj = kzalloc(sizeof(*obj), GFP_KERNEL_ACCOUNT);
	if (!obj)
		goto out_bytes;
	init_waitqueue_head(&obj->wq);
	obj->timens = *timens;
	obj->entries = entries;
	obj->bytes = bytes;
	obj->wheel = htw_wheel_create_table(geo, &htw_hrtimer_clock,
					    htw_table_obj_ready, obj, entries,
					    htw_timens_offset(timens, geo->clockid));
	if (IS_ERR(obj->wheel)) {
		ret = PTR_ERR(obj->wheel);
		kfree(obj);
		goto out_bytes;
	}
	htw_quota_hold(quota);
	obj->quota = quota;
	return obj;

out_bytes:
	htw_quota_uncharge_n(quota, HTW_LIMIT_WHEEL_BYTES, bytes);
out_timers:
	htw_quota_uncharge_n(quota, HTW_LIMIT_TIMERS, entries);
	return ERR_PTR(ret);
}

int htw_table_obj_create(const struct htw_geometry *geo, struct htw_quota *quota,
			 const struct htw_timens *timens,
			 struct htw_table2_setup *ts, void __user *argp)
{
	struct htw_table_obj *obj;
	struct file *file;
	int fd;

	obj = htw_table_obj_new(geo, quota, timens, ts->entries);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		htw_table_obj_free(obj);
		return fd;
	}
	file = anon_inode_getfile("[htwheel-table]", &htw_table_obj_fops, obj,
				  O_RDWR | O_CLOEXEC);
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		htw_table_obj_free(obj);
		return PTR_ERR(file);
	}
	/* The answer before the descriptor exists: a fault leaves none. */
	htw_table_layout_for(ts->entries, ts);
	ts->fd = fd;
	if (copy_to_user(argp, ts, sizeof(*ts))) {
		put_unused_fd(fd);
		fput(file);	/* release frees the object */
		return -EFAULT;
	}
	fd_install(fd, file);
	return fd;
}
