/* SPDX-License-Identifier: GPL-2.0 */
/*
 * htwheel handle table: the 64-bit names a wheel gives its timers, and
 * the table that maps a name back to its object without a lock.  Knows
 * nothing of timers or wheels: an object is an opaque pointer (at least
 * 2-byte aligned) that the caller publishes and looks up.
 *
 * A handle is (gen << HTW_ID_BITS | id) ^ key: the id names an entry of
 * the table, the generation counts the uses of that id.  Ids are reused
 * first-in first-out, so one id's generation advances only once every
 * time the whole free list went round, and an id whose generation is used
 * up is retired, never reused: a handle value is never issued twice by
 * one table.  The key has its top bit set (raw handles never have it), so
 * no handle is 0; a wheel draws it at random, so that another wheel's
 * handles almost surely name nothing here.
 *
 * The table does not keep the generation of an entry in use: a lookup
 * finds the object by id, and the caller confirms the identity against
 * the handle the object carries (the wheel's htw_timer_is()).
 */
#ifndef _HTW_HANDLES_H
#define _HTW_HANDLES_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#define HTW_ID_BITS		26	/* a table holds up to 2^26 ids */
#define HTW_ID_MASK		(BIT_ULL(HTW_ID_BITS) - 1)
#define HTW_GEN_BITS		36	/* what a free table entry can hold */
#define HTW_GEN_MAX		(BIT_ULL(HTW_GEN_BITS) - 1)
#define HTW_HANDLE_KEY_TOP	BIT_ULL(63)

/*
 * Entries come in chunks of HTW_IDS_PER_CHUNK, allocated on demand and
 * never freed before the table, so an entry can always be read without a
 * lock.  An entry holds either an object pointer (bit 0 clear) or, when
 * free, bit 0 set, the next free id in bits 1..27 and the generation its
 * next user gets in bits 28..63.
 */
#define HTW_IDS_PER_CHUNK	(PAGE_SIZE / sizeof(atomic64_t))
#define HTW_ID_NONE		((u32)BIT(HTW_ID_BITS + 1) - 1)

struct htw_handles {
	u64 key;		/* scrambles handles; top bit set; fixed */
	u32 nchunks;		/* capacity of @dir; fixed */
	/*
	 * The chunk pointers, written once each under @grow_lock with
	 * release semantics and read locklessly with acquire.
	 */
	atomic64_t **dir;
	/*
	 * Serialises growth: @used_chunks and the writes to @dir.  Taken
	 * before @lock, in process context only.
	 */
	struct mutex grow_lock;
	u32 used_chunks;
	/*
	 * The FIFO free list: @head, @tail and the contents of every free
	 * entry.  Process context only (timers are allocated and freed
	 * there), so it is taken without _bh; a leaf, inside no wheel lock.
	 * A used entry is written by its user alone (htw_handle_set()) and
	 * read locklessly by lookups.
	 */
	spinlock_t lock;
	u32 head;		/* next id to hand out, HTW_ID_NONE if none */
	u32 tail;		/* last freed id, HTW_ID_NONE if none */
};

/* A table of up to @capacity ids (<= 2^HTW_ID_BITS) scrambled with @key. */
int htw_handles_init(struct htw_handles *h, u64 capacity, u64 key);
void htw_handles_destroy(struct htw_handles *h);
/* Bytes htw_handles_init() allocates for @capacity (the directory). */
size_t htw_handles_footprint(u64 capacity);

/*
 * Reserve the oldest free id and return its next handle; -ENOSPC when
 * every id is in use or retired, -ENOMEM.  Process context, may sleep.
 * Until htw_handle_set() the handle looks up as nothing.
 */
int htw_handle_get(struct htw_handles *h, u64 *handle);
/* Publish @obj under @handle, after what the caller wrote to it. */
void htw_handle_set(struct htw_handles *h, u64 handle, void *obj);
/* Give @handle's id back (or retire it); its handle is never seen again. */
void htw_handle_put(struct htw_handles *h, u64 handle);

/*
 * Decode @handle; false for a value this table never issues (generation
 * 0 or bits above the generation set).
 */
bool htw_handle_decode(const struct htw_handles *h, u64 handle, u32 *id,
		       u64 *gen);
/*
 * The object published under @handle's id, or NULL (a free id, or a
 * value the table never issues).  It may belong to a later generation:
 * the caller checks.  Lockless; the object's lifetime is the caller's
 * business (the wheel uses SLAB_TYPESAFE_BY_RCU and rcu_read_lock()).
 */
void *htw_handle_lookup(struct htw_handles *h, u64 handle);

#endif /* _HTW_HANDLES_H */
