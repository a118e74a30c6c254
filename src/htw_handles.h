/* SPDX-License-Identifier: GPL-2.0 */
/*
 * htwheel handle table: the 64-bit names a wheel gives its timers, and the
 * storage of the objects they name.  A table holds fixed-size objects in
 * chunks that are allocated on demand and never freed before the table, so
 * the object of an id is always a valid object of this table and can be
 * read without a lock; nothing is shared between tables.  It knows nothing
 * of timers or wheels: an object is @size bytes with one u64 at @word_off
 * that the table owns (the "handle word").
 *
 * A handle is (gen << HTW_ID_BITS | id) ^ key: the id names an object of
 * the table, the generation counts the uses of that id.  Ids are reused
 * last-in first-out, so a new timer takes the memory the last one freed
 * while it is still in the cache; each use of an id takes its next
 * generation, and an id whose generations are used up is retired, never
 * reused: a handle value is never issued twice by one table.
 * The key has its top bit set (raw handles never have it), so no handle is
 * 0; a wheel draws it at random, so that another wheel's handles almost
 * surely name nothing here.
 *
 * The handle word of an object in use is its handle, written by
 * htw_handle_get() before it returns.  Of a free object it holds the free
 * stack's link and the generation the id's next user gets (bit 0 set);
 * that value may by chance equal a handle of this table, so the caller
 * keeps its own mark of a free object (the wheel's HTW_FREE state) and
 * checks it after the handle word (htw_timer_is()).
 */
#ifndef _HTW_HANDLES_H
#define _HTW_HANDLES_H

#include <linux/bits.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#define HTW_ID_BITS		27	/* chunk number, then index in it */
#define HTW_ID_MASK		(BIT_ULL(HTW_ID_BITS) - 1)
#define HTW_GEN_BITS		35	/* what a free handle word can hold */
#define HTW_GEN_MAX		(BIT_ULL(HTW_GEN_BITS) - 1)
#define HTW_HANDLE_KEY_TOP	BIT_ULL(63)

/*
 * Objects per chunk: 585 56-byte timers take 32760 bytes of an order-3
 * slab's 32768.  Not a power of two, so an id is the chunk's number
 * shifted by HTW_CHUNK_SHIFT and the object's index in it: finding the
 * object is a shift and a mask, and indexes 585..1023 are never used.
 */
#define HTW_IDS_PER_CHUNK	585U
#define HTW_CHUNK_SHIFT		10
#define HTW_CHUNK_INDEX_MASK	(BIT(HTW_CHUNK_SHIFT) - 1)
/* The most objects a table can hold. */
#define HTW_HANDLES_MAX		(BIT_ULL(HTW_ID_BITS - HTW_CHUNK_SHIFT) * HTW_IDS_PER_CHUNK)
#define HTW_ID_NONE		((u32)BIT(HTW_ID_BITS + 1) - 1)

struct htw_handles {
	u64 key;		/* scrambles handles; top bit set; fixed */
	u32 nchunks;		/* capacity of @dir; fixed */
	u32 capacity;		/* ids in use at most; fixed */
	u16 obj_size;		/* fixed */
	u16 word_off;		/* offset of the handle word; fixed */
	struct kmem_cache *chunks;	/* of HTW_IDS_PER_CHUNK objects; fixed */
	/*
	 * The chunk pointers, written once each under @grow_lock with
	 * release semantics and read locklessly with acquire.
	 */
	void **dir;
	/*
	 * Serialises growth: @used_chunks and the writes to @dir.  Taken
	 * before @lock, in process context only.
	 */
	struct mutex grow_lock;
	u32 used_chunks;
	/*
	 * The free stack: @head, @used and the handle words of
	 * every free object.  Process context only (objects are taken and
	 * given back there), so it is taken without _bh; a leaf, inside no
	 * wheel lock.  The handle word of an object in use changes only
	 * when the object is given back.
	 */
	spinlock_t lock;
	u32 head;		/* next id to hand out, HTW_ID_NONE if none */
	u32 used;		/* ids handed out and not given back */
};

/*
 * A table of up to @capacity (<= HTW_HANDLES_MAX) objects of @size bytes, a
 * multiple of 8, with the handle word at @word_off; handles scrambled with
 * @key; chunks from @chunks, a cache of HTW_IDS_PER_CHUNK * @size byte
 * objects (so that they are counted, accounted and can be failed like
 * any slab's).  -EINVAL for a layout it cannot hold, -ENOMEM.
 */
int htw_handles_init(struct htw_handles *h, u64 capacity, u64 key,
		     size_t size, size_t word_off, struct kmem_cache *chunks);
void htw_handles_destroy(struct htw_handles *h);
/* Bytes htw_handles_init() allocates for @capacity (the directory). */
size_t htw_handles_footprint(u64 capacity);
/* Bytes of the chunks allocated so far (all the objects' memory). */
size_t htw_handles_chunk_bytes(struct htw_handles *h);

/* Whether every id is in use, read without the lock (a hint). */
static inline bool htw_handles_full(const struct htw_handles *h)
{
	return READ_ONCE(h->used) >= h->capacity;
}

/* The slow path of htw_handle_get(): -ENOSPC, -ENOMEM or 0. */
int htw_handles_grow(struct htw_handles *h);

/* ---- inline: they run on every schedule, cancel and re-arm ---- */

/* The first id of chunk @nr, and the id of @index in it. */
static inline u32 htw_chunk_id(u32 nr, u32 index)
{
	return nr << HTW_CHUNK_SHIFT | index;
}

/* Where in its chunk the object of @id is. */
static inline u32 htw_id_index(u32 id)
{
	return id & HTW_CHUNK_INDEX_MASK;
}

/* Which object of all the table could hold @id is: 0, 1, ... */
static inline u32 htw_id_ordinal(u32 id)
{
	return (id >> HTW_CHUNK_SHIFT) * HTW_IDS_PER_CHUNK + htw_id_index(id);
}

static inline void *htw_id_object(struct htw_handles *h, u32 id)
{
	u32 index = htw_id_index(id);
	void *chunk;

	if (id >> HTW_CHUNK_SHIFT >= h->nchunks || index >= HTW_IDS_PER_CHUNK)
		return NULL;
	/* Pairs with the release in htw_handles_grow(): the chunk is zeroed. */
	chunk = smp_load_acquire(&h->dir[id >> HTW_CHUNK_SHIFT]);
	return chunk ? chunk + (size_t)index * h->obj_size : NULL;
}

/*
 * The chunk of @id, an id of an object in use that the caller reached
 * through another one (so the chunk is published and seen): no bounds
 * check and no acquire.  The object is htw_id_index(@id) objects in,
 * which a caller that knows the object's type finds with one multiply
 * by a constant.
 */
static inline void *htw_id_chunk_in_use(const struct htw_handles *h, u32 id)
{
	return READ_ONCE(h->dir[id >> HTW_CHUNK_SHIFT]);
}

static inline u64 *htw_word(const struct htw_handles *h, void *obj)
{
	return obj + h->word_off;
}

static inline u64 htw_free_word(u64 gen, u32 next)
{
	return gen << (HTW_ID_BITS + 2) | (u64)next << 1 | 1;
}

static inline u64 htw_free_word_gen(u64 word)
{
	return word >> (HTW_ID_BITS + 2);
}

static inline u32 htw_free_word_next(u64 word)
{
	return (word >> 1) & HTW_ID_NONE;
}

static inline u64 htw_handle_make(const struct htw_handles *h, u32 id,
				  u64 gen)
{
	return (gen << HTW_ID_BITS | id) ^ h->key;
}

static inline void htw_set_word(struct htw_handles *h, void *obj, u64 word)
{
	WRITE_ONCE(*htw_word(h, obj), word);
}

/* Pop the top of the free stack; the caller holds @lock and saw one. */
static inline void *htw_free_pop_locked(struct htw_handles *h, u64 *handle)
{
	u32 id = h->head;
	void *obj = htw_id_object(h, id);
	u64 word = READ_ONCE(*htw_word(h, obj));

	lockdep_assert_held(&h->lock);
	h->head = htw_free_word_next(word);
	h->used++;
	*handle = htw_handle_make(h, id, htw_free_word_gen(word));
	htw_set_word(h, obj, *handle);
	return obj;
}

/*
 * Take the id freed last (or a new chunk's next): returns its object,
 * whose handle word is the new handle (also in *@handle), or
 * ERR_PTR(-ENOSPC) when @capacity ids are in use or every id is retired,
 * ERR_PTR(-ENOMEM).  A never used object is zeroed; a reused one holds
 * what its last user left but for the handle word.  Process context, may
 * sleep.
 */
static inline void *htw_handle_get(struct htw_handles *h, u64 *handle)
{
	void *obj;
	int ret;

	might_sleep();
	for (;;) {
		spin_lock(&h->lock);
		if (h->used >= h->capacity) {
			spin_unlock(&h->lock);
			return ERR_PTR(-ENOSPC);
		}
		if (h->head != HTW_ID_NONE)
			break;
		spin_unlock(&h->lock);
		ret = htw_handles_grow(h);
		if (ret)
			return ERR_PTR(ret);
	}
	obj = htw_free_pop_locked(h, handle);
	spin_unlock(&h->lock);
	return obj;
}

/*
 * The id goes on top of the free stack, so the next timer reuses the
 * memory just given back, still in the cache.  An id whose generations
 * are used up is retired: its object stays free but off the stack, so no
 * handle is ever issued twice.  The caller has marked the object free in
 * its own way first.
 */
static inline void htw_handle_put(struct htw_handles *h, void *obj)
{
	u64 raw = READ_ONCE(*htw_word(h, obj)) ^ h->key;
	u64 gen = raw >> HTW_ID_BITS;
	u32 id = raw & HTW_ID_MASK;

	spin_lock(&h->lock);
	h->used--;
	if (gen >= HTW_GEN_MAX) {
		htw_set_word(h, obj, htw_free_word(0, HTW_ID_NONE));
	} else {
		htw_set_word(h, obj, htw_free_word(gen + 1, h->head));
		h->head = id;
	}
	spin_unlock(&h->lock);
}

/* The id of @handle, a handle of this table. */
static inline u32 htw_handle_id(const struct htw_handles *h, u64 handle)
{
	return (handle ^ h->key) & HTW_ID_MASK;
}

/*
 * Decode @handle; false for a value this table never issues (generation
 * 0 or bits above the generation set).
 */
static inline bool htw_handle_decode(const struct htw_handles *h, u64 handle,
				     u32 *id, u64 *gen)
{
	u64 raw = handle ^ h->key;

	*id = raw & HTW_ID_MASK;
	*gen = raw >> HTW_ID_BITS;
	return *gen && *gen <= HTW_GEN_MAX;
}

/*
 * The object of @handle's id, in use or not, or NULL (a value the table
 * never issues, or an id no chunk holds yet).  Lockless: the caller checks
 * that the handle word is @handle and that the object is in use.
 */
static inline void *htw_handle_lookup(struct htw_handles *h, u64 handle)
{
	u64 gen;
	u32 id;

	if (!htw_handle_decode(h, handle, &id, &gen))
		return NULL;
	return htw_id_object(h, id);
}

#ifdef HTW_TEST_BUILD
/*
 * Make every free id look used @gen - 1 times already, so that a suite
 * reaches the end of the generations in a few calls.
 */
void htw_handles_age(struct htw_handles *h, u64 gen);
#endif

#endif /* _HTW_HANDLES_H */
