// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * libhtwheel: thin, allocation-free wrappers around the /dev/htwheel ABI.
 *
 * The handle only remembers the file descriptor, the clock and the
 * features the handshake reported; the kernel keeps all timer state, so
 * every function is as thread-safe as the device (schedule, cancel and
 * read may run concurrently).  The shared timer table is the exception:
 * each of its rings has one producer and one consumer (<htwheel.h>).
 *
 * The kernel is the one place that validates what goes to it: flags, pad
 * and reserved fields pass through as the caller set them, so a library
 * built against an older header works with a kernel that defines more.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "htwheel.h"

struct htw {
	int fd;
	clockid_t clockid;
	uint64_t features;
};

static int htw_errno(void)
{
	return errno ? -errno : -EIO;
}

/*
 * The kernel answers EINVAL when it does not speak our API version: say
 * so with an errno of its own, distinct from a refused geometry.  What it
 * supports is kept: a file takes the handshake once.
 */
static int htw_handshake(int fd, uint64_t *features)
{
	struct htw_api api;
	int ret;

	memset(&api, 0, sizeof(api));
	api.api = HTW_API_VERSION;
	if (!ioctl(fd, HTW_IOC_API, &api)) {
		*features = api.features;
		return 0;
	}
	ret = htw_errno();
	return ret == -EINVAL ? -EPROTONOSUPPORT : ret;
}

/* Apply @p and write back what the kernel made of it. */
static int htw_setup_params(int fd, struct htw_params *p)
{
	struct htw_setup setup;

	static_assert(sizeof(setup.reserved) == sizeof(p->reserved),
		      "htw_params.reserved passes through to htw_setup");
	memset(&setup, 0, sizeof(setup));
	setup.tick_ns = p->tick_ns;
	setup.slots = p->slots;
	setup.clockid = p->clockid ? p->clockid : CLOCK_MONOTONIC;
	setup.max_pending = p->max_pending;
	setup.flags = p->flags;
	memcpy(setup.reserved, p->reserved, sizeof(setup.reserved));
	if (ioctl(fd, HTW_IOC_SETUP, &setup))
		return htw_errno();
	p->tick_ns = setup.tick_ns;
	p->slots = setup.slots;
	p->clockid = setup.clockid;
	p->max_pending = setup.max_pending;
	p->levels = setup.levels;
	return 0;
}

int htw_open(struct htw **hp, struct htw_params *params)
{
	struct htw_params defaults = { 0 };
	struct htw_params *p = params ? params : &defaults;
	struct htw *h;
	int ret;

	if (!hp)
		return -EINVAL;
	*hp = NULL;
	h = malloc(sizeof(*h));
	if (!h)
		return -ENOMEM;
	/* Non-blocking: the fd is meant for poll/epoll; htw_wait() blocks. */
	h->fd = open(p->device ? p->device : HTW_DEVICE_PATH,
		     O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (h->fd < 0) {
		ret = htw_errno();
		free(h);
		return ret;
	}
	ret = htw_handshake(h->fd, &h->features);
	if (!ret)
		ret = htw_setup_params(h->fd, p);
	if (ret) {
		close(h->fd);
		free(h);
		return ret;
	}
	h->clockid = p->clockid;
	*hp = h;
	return 0;
}

int htw_close(struct htw *h)
{
	int ret;

	if (!h)
		return -EINVAL;
	ret = close(h->fd) ? htw_errno() : 0;
	free(h);
	return ret;
}

int htw_fd(const struct htw *h)
{
	return h ? h->fd : -EINVAL;
}

uint64_t htw_now(const struct htw *h)
{
	struct timespec ts;

	if (!h || clock_gettime(h->clockid, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * HTW_NSEC_PER_SEC + ts.tv_nsec;
}

/* One ioctl for up to HTW_BATCH_MAX entries; the count or -errno. */
static int htw_schedule_batch(int fd, struct htw_timer_entry *e, uint32_t n)
{
	struct htw_schedule req;
	int ret;

	memset(&req, 0, sizeof(req));
	req.entries = (uintptr_t)e;
	req.count = n;
	ret = ioctl(fd, HTW_IOC_SCHEDULE, &req);
	return ret < 0 ? htw_errno() : ret;
}

/*
 * The kernel checks each chunk whole before it schedules any of it; a
 * chunk it refuses after others were scheduled ends the batch there, with
 * the count so far, as a limit reached part way does.
 */
int htw_schedule_many(struct htw *h, struct htw_timer_entry *entries,
		      unsigned int count)
{
	unsigned int done = 0;
	int ret;

	if (!h || count > INT_MAX)
		return -EINVAL;
	while (done < count) {
		uint32_t n = count - done;

		if (n > HTW_BATCH_MAX)
			n = HTW_BATCH_MAX;
		ret = htw_schedule_batch(h->fd, entries + done, n);
		if (ret < 0)
			return done ? (int)done : ret;
		done += ret;
		/* A short batch: the kernel said why by stopping; so do we. */
		if ((uint32_t)ret < n)
			break;
	}
	return done;
}

int htw_schedule(struct htw *h, uint64_t cookie, uint64_t delay_ns,
		 uint64_t period_ns, uint64_t *handle)
{
	struct htw_timer_entry e;
	int ret;

	memset(&e, 0, sizeof(e));
	e.cookie = cookie;
	e.expires = delay_ns;
	e.period_ns = period_ns;
	ret = htw_schedule_many(h, &e, 1);
	if (ret < 0)
		return ret;
	if (handle)
		*handle = e.handle;
	return 0;
}

/*
 * One ioctl per chunk of at most HTW_BATCH_MAX entries of @size bytes:
 * the kernel checks each chunk whole.  Returns the sum of what @batch
 * returned, or its error if the first chunk failed; a later failure
 * reports what the chunks before it did, which happened.
 */
static int htw_in_chunks(struct htw *h, void *entries, size_t size,
			 unsigned int count,
			 int (*batch)(int fd, void *entries, uint32_t n))
{
	unsigned int done = 0, total = 0;
	int ret;

	if (!h || count > INT_MAX)
		return -EINVAL;
	while (done < count) {
		uint32_t n = count - done;

		if (n > HTW_BATCH_MAX)
			n = HTW_BATCH_MAX;
		ret = batch(h->fd, (char *)entries + (size_t)done * size, n);
		if (ret < 0)
			return done ? (int)total : ret;
		total += ret;
		done += n;
	}
	return total;
}

static int htw_cancel_batch(int fd, void *entries, uint32_t n)
{
	struct htw_cancel req;

	memset(&req, 0, sizeof(req));
	req.entries = (uintptr_t)entries;
	req.count = n;
	if (ioctl(fd, HTW_IOC_CANCEL, &req))
		return htw_errno();
	return req.cancelled;
}

int htw_cancel_many(struct htw *h, struct htw_cancel_entry *entries,
		    unsigned int count)
{
	return htw_in_chunks(h, entries, sizeof(*entries), count, htw_cancel_batch);
}

int htw_cancel(struct htw *h, uint64_t handle)
{
	struct htw_cancel_entry e = { .handle = handle };
	int ret = htw_cancel_many(h, &e, 1);

	if (ret < 0)
		return ret;
	switch (e.result) {
	case HTW_CANCELLED:
		return 0;
	case HTW_CANCEL_FIRED:
		return -EALREADY;
	default:
		return -ENOENT;
	}
}

static int htw_rearm_batch(int fd, void *entries, uint32_t n)
{
	struct htw_rearm req;

	memset(&req, 0, sizeof(req));
	req.entries = (uintptr_t)entries;
	req.count = n;
	if (ioctl(fd, HTW_IOC_REARM, &req))
		return htw_errno();
	return req.rearmed;
}

int htw_rearm_many(struct htw *h, struct htw_rearm_entry *entries,
		   unsigned int count)
{
	return htw_in_chunks(h, entries, sizeof(*entries), count, htw_rearm_batch);
}

/* mod_timer()'s answer: 1 if the timer was pending, 0 if it had expired. */
int htw_rearm(struct htw *h, uint64_t handle, uint64_t delay_ns)
{
	struct htw_rearm_entry e = { .handle = handle, .expires = delay_ns };
	int ret = htw_rearm_many(h, &e, 1);

	if (ret < 0)
		return ret;
	switch (e.result) {
	case HTW_REARMED:
		return 1;
	case HTW_REARM_FIRED:
		return 0;
	default:
		return -ENOENT;
	}
}

int htw_read(struct htw *h, struct htw_expiry *recs, unsigned int max)
{
	ssize_t n;

	if (!h || !max)
		return -EINVAL;
	if (max > INT_MAX / sizeof(*recs))
		max = INT_MAX / sizeof(*recs);
	n = read(h->fd, recs, (size_t)max * sizeof(*recs));
	if (n < 0)
		return errno == EAGAIN ? 0 : htw_errno();
	return n / sizeof(*recs);
}

int htw_wait(struct htw *h, int64_t timeout_ns)
{
	struct pollfd pfd;
	struct timespec ts, *tsp = NULL;
	int ret;

	if (!h)
		return -EINVAL;
	pfd.fd = h->fd;
	pfd.events = POLLIN;
	if (timeout_ns >= 0) {
		ts.tv_sec = timeout_ns / (int64_t)HTW_NSEC_PER_SEC;
		ts.tv_nsec = timeout_ns % (int64_t)HTW_NSEC_PER_SEC;
		tsp = &ts;
	}
	ret = ppoll(&pfd, 1, tsp, NULL);
	if (ret < 0)
		return htw_errno();
	if (!ret || (pfd.revents & POLLIN))
		return ret ? 1 : 0;
	/* Woken without records: say why rather than "ready". */
	if (pfd.revents & POLLNVAL)
		return -EBADF;
	return -EIO;
}

int htw_drain(struct htw *h, struct htw_unexpired *out, unsigned int max)
{
	struct htw_drain req;

	/* A @max above HTW_BATCH_MAX is the kernel's to refuse. */
	if (!h || (max && !out))
		return -EINVAL;
	memset(&req, 0, sizeof(req));
	req.entries = max ? (uintptr_t)out : 0;
	req.count = max;
	if (ioctl(h->fd, HTW_IOC_DRAIN, &req))
		return htw_errno();
	return req.drained > INT_MAX ? INT_MAX : (int)req.drained;
}

int htw_stats(struct htw *h, struct htw_stats *st)
{
	if (!h || !st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	return ioctl(h->fd, HTW_IOC_STATS, st) ? htw_errno() : 0;
}

int htw_set_eventfd(struct htw *h, int efd)
{
	struct htw_eventfd req;

	if (!h)
		return -EINVAL;
	memset(&req, 0, sizeof(req));
	req.fd = efd;
	return ioctl(h->fd, HTW_IOC_SET_EVENTFD, &req) ? htw_errno() : 0;
}

/* ---- the shared timer table ---- */

/* Does [@off, @off + @len) lie below @end? */
static int htw_table_part_fits(uint64_t off, uint64_t len, uint64_t end)
{
	return off <= end && len <= end - off;
}

static int htw_table_ring_ok(uint32_t n, uint32_t entries)
{
	return n >= entries && !(n & (n - 1));
}

/*
 * The layout the kernel answered, checked before any of it is used: the
 * parts in the documented order, each inside the mapping and aligned for
 * the atomics on it, a submission ring that is a power of two with room
 * for every slot, a completion ring that is a power of two.
 */
static int htw_table2_layout_ok(const struct htw_table2_setup *ts,
				uint32_t entries)
{
	uint64_t slots = (uint64_t)entries * sizeof(struct htw_table2_slot);
	uint64_t sq = (uint64_t)ts->sq_entries * sizeof(uint32_t);
	uint64_t cq = (uint64_t)ts->cq_entries * sizeof(struct htw_table2_cqe);

	if (ts->entries != entries || ts->mmap_size > SIZE_MAX || ts->fd < 0 ||
	    !htw_table_ring_ok(ts->sq_entries, entries) ||
	    !ts->cq_entries || (ts->cq_entries & (ts->cq_entries - 1)))
		return 0;
	if (ts->slots_off < sizeof(struct htw_table2_header) ||
	    ts->slots_off % 8 || ts->sq_off % 4 || ts->cq_off % 8)
		return 0;
	return htw_table_part_fits(ts->slots_off, slots, ts->sq_off) &&
	       htw_table_part_fits(ts->sq_off, sq, ts->cq_off) &&
	       htw_table_part_fits(ts->cq_off, cq, ts->mmap_size);
}

static int htw_table2_map(struct htw_table2 *t, const struct htw_table2_setup *ts)
{
	char *map = mmap(NULL, ts->mmap_size, PROT_READ | PROT_WRITE,
			 MAP_SHARED, ts->fd, 0);

	if (map == MAP_FAILED)
		return htw_errno();
	t->fd = ts->fd;
	t->entries = ts->entries;
	t->sq_mask = ts->sq_entries - 1;
	t->cq_mask = ts->cq_entries - 1;
	t->hdr = (struct htw_table2_header *)map;
	t->slots = (struct htw_table2_slot *)(map + ts->slots_off);
	t->sq = (uint32_t *)(map + ts->sq_off);
	t->cq = (struct htw_table2_cqe *)(map + ts->cq_off);
	t->map = map;
	t->map_size = ts->mmap_size;
	/* A header that disagrees with the ioctl is not a table we know. */
	if (t->hdr->entries != t->entries || t->hdr->sq_mask != t->sq_mask ||
	    t->hdr->cq_mask != t->cq_mask) {
		munmap(map, ts->mmap_size);
		return -EPROTO;
	}
	return 0;
}

/*
 * Without the feature the kernel would answer ENOTTY; the handshake has
 * said so already, and EOPNOTSUPP says it better.
 */
int htw_table2_create(struct htw *h, uint32_t entries, uint32_t flags,
		      struct htw_table2 **tp)
{
	struct htw_table2_setup ts;
	struct htw_table2 *t;
	int ret;

	if (!tp)
		return -EINVAL;
	*tp = NULL;
	if (!h)
		return -EINVAL;
	if (!(h->features & HTW_FEATURE_TABLE))
		return -EOPNOTSUPP;
	t = malloc(sizeof(*t));
	if (!t)
		return -ENOMEM;
	memset(&ts, 0, sizeof(ts));
	ts.entries = entries;
	ts.flags = flags;
	if (ioctl(h->fd, HTW_IOC_TABLE2_CREATE, &ts) < 0) {
		ret = htw_errno();
		free(t);
		return ret;
	}
	ret = htw_table2_layout_ok(&ts, entries) ? htw_table2_map(t, &ts) : -EPROTO;
	if (ret) {
		close(ts.fd);
		free(t);
		return ret;
	}
	*tp = t;
	return 0;
}

/* Unmap and close: the table goes with its last descriptor and mapping. */
int htw_table2_close(struct htw_table2 *t)
{
	int ret;

	if (!t)
		return -EINVAL;
	ret = munmap(t->map, t->map_size) ? htw_errno() : 0;
	if (close(t->fd) && !ret)
		ret = htw_errno();
	free(t);
	return ret;
}

int htw_table2_enter(struct htw_table2 *t)
{
	int ret;

	if (!t)
		return -EINVAL;
	ret = ioctl(t->fd, HTW_IOC_TABLE2_ENTER, 0);
	return ret < 0 ? htw_errno() : ret;
}

int htw_table2_stats(struct htw_table2 *t, struct htw_table_stats *st)
{
	if (!t || !st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	return ioctl(t->fd, HTW_IOC_TABLE2_STATS, st) ? htw_errno() : 0;
}
