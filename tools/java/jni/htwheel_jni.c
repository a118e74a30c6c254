// SPDX-License-Identifier: (GPL-2.0 OR MIT)
/*
 * The JNI side of io.htwheel.HtwheelTimer: thin wrappers of libhtwheel's
 * handle API, one call per batch.  Every function returns a count or a
 * negative errno; the Java side turns errnos into exceptions.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <jni.h>
#include <htwheel.h>

#define J(name) Java_io_htwheel_Native_##name

static struct htw *htw_of(jlong h)
{
	return (struct htw *)(uintptr_t)h;
}

/* Returns the handle, or a negative errno; @geom gets tick, slots, levels. */
JNIEXPORT jlong JNICALL J(open)(JNIEnv *env, jclass cls, jlong tick_ns,
				jint slots, jlong max_pending, jlongArray geom)
{
	struct htw_params p;
	struct htw *h;
	jlong out[3];
	int ret;

	memset(&p, 0, sizeof(p));
	p.tick_ns = (uint64_t)tick_ns;
	p.slots = (uint32_t)slots;
	p.max_pending = (uint64_t)max_pending;
	ret = htw_open(&h, &p);
	if (ret < 0)
		return ret;
	out[0] = (jlong)p.tick_ns;
	out[1] = (jlong)p.slots;
	out[2] = (jlong)p.levels;
	(*env)->SetLongArrayRegion(env, geom, 0, 3, out);
	return (jlong)(uintptr_t)h;
}

JNIEXPORT void JNICALL J(close)(JNIEnv *env, jclass cls, jlong h)
{
	htw_close(htw_of(h));
}

/* Schedules @n one-shot timers; @handles gets their handles. */
JNIEXPORT jint JNICALL J(schedule)(JNIEnv *env, jclass cls, jlong h,
				   jlongArray cookies, jlongArray delays,
				   jlongArray handles, jint n)
{
	struct htw_timer_entry *e;
	jlong *c, *d, *o;
	int i, ret;

	if (n <= 0 || (unsigned int)n > HTW_BATCH_MAX)
		return -EINVAL;
	e = calloc(n, sizeof(*e));
	o = malloc(n * sizeof(*o));
	if (!e || !o) {
		free(e);
		free(o);
		return -ENOMEM;
	}
	c = (*env)->GetLongArrayElements(env, cookies, NULL);
	d = (*env)->GetLongArrayElements(env, delays, NULL);
	for (i = 0; i < n; i++) {
		e[i].cookie = (uint64_t)c[i];
		e[i].expires = (uint64_t)d[i];
	}
	(*env)->ReleaseLongArrayElements(env, cookies, c, JNI_ABORT);
	(*env)->ReleaseLongArrayElements(env, delays, d, JNI_ABORT);
	ret = htw_schedule_many(htw_of(h), e, n);
	for (i = 0; i < n; i++)
		o[i] = (jlong)e[i].handle;
	if (ret > 0)
		(*env)->SetLongArrayRegion(env, handles, 0, ret, o);
	free(e);
	free(o);
	return ret;
}

/* Cancels @n timers; @results gets HTW_CANCELLED, _FIRED or _UNKNOWN. */
JNIEXPORT jint JNICALL J(cancel)(JNIEnv *env, jclass cls, jlong h,
				 jlongArray handles, jintArray results, jint n)
{
	struct htw_cancel_entry *e;
	jint *r;
	jlong *hd;
	int i, ret;

	if (n <= 0 || (unsigned int)n > HTW_BATCH_MAX)
		return -EINVAL;
	e = calloc(n, sizeof(*e));
	r = malloc(n * sizeof(*r));
	if (!e || !r) {
		free(e);
		free(r);
		return -ENOMEM;
	}
	hd = (*env)->GetLongArrayElements(env, handles, NULL);
	for (i = 0; i < n; i++)
		e[i].handle = (uint64_t)hd[i];
	(*env)->ReleaseLongArrayElements(env, handles, hd, JNI_ABORT);
	ret = htw_cancel_many(htw_of(h), e, n);
	for (i = 0; i < n; i++)
		r[i] = (jint)e[i].result;
	if (ret >= 0)
		(*env)->SetIntArrayRegion(env, results, 0, n, r);
	free(e);
	free(r);
	return ret;
}

/*
 * Blocks until the device is readable, then reads up to @max records:
 * @cookies and @expired get their cookies and expiry times.  The worker
 * sleeps in poll() with no timeout, so an idle timer never wakes.
 */
JNIEXPORT jint JNICALL J(waitRead)(JNIEnv *env, jclass cls, jlong h,
				   jlongArray cookies, jlongArray expired,
				   jint max)
{
	struct htw_expiry recs[256];
	jlong c[256], x[256];
	int i, ret;

	if (max > 256)
		max = 256;
	ret = htw_wait(htw_of(h), -1);
	if (ret < 0)
		return ret == -EINTR ? 0 : ret;
	ret = htw_read(htw_of(h), recs, max);
	for (i = 0; i < ret; i++) {
		c[i] = (jlong)recs[i].cookie;
		x[i] = (jlong)recs[i].expired_ns;
	}
	if (ret > 0) {
		(*env)->SetLongArrayRegion(env, cookies, 0, ret, c);
		(*env)->SetLongArrayRegion(env, expired, 0, ret, x);
	}
	return ret;
}

/* Cancels every pending timer; @cookies gets up to @max of theirs. */
JNIEXPORT jint JNICALL J(drain)(JNIEnv *env, jclass cls, jlong h,
				jlongArray cookies, jint max)
{
	struct htw_unexpired recs[256];
	jlong c[256];
	int i, ret;

	if (max > 256)
		max = 256;
	ret = htw_drain(htw_of(h), recs, max);
	for (i = 0; i < ret && i < max; i++)
		c[i] = (jlong)recs[i].cookie;
	if (ret > 0)
		(*env)->SetLongArrayRegion(env, cookies, 0, ret < max ? ret : max, c);
	return ret;
}

JNIEXPORT jlong JNICALL J(now)(JNIEnv *env, jclass cls, jlong h)
{
	return (jlong)htw_now(htw_of(h));
}

JNIEXPORT jstring JNICALL J(strerror)(JNIEnv *env, jclass cls, jint err)
{
	return (*env)->NewStringUTF(env, strerror(err));
}
