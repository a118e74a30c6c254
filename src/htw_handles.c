// SPDX-License-Identifier: GPL-2.0
/*
 * htwheel handle table: ids with generations, a free stack kept in
 * the free objects' handle words, chunks of objects allocated on demand,
 * lockless lookups.  See htw_handles.h.
 */
#include <linux/err.h>
#include <linux/log2.h>
#include <linux/mm.h>

#include "htw_compat.h"
#include "htw_handles.h"
#include "htw_test_hooks.h"

static void *htw_id_object(struct htw_handles *h, u32 id)
{
	void *chunk;

	if (id >= h->nchunks * HTW_IDS_PER_CHUNK)
		return NULL;
	/* Pairs with the release in htw_handles_grow(): the chunk is zeroed. */
	chunk = smp_load_acquire(&h->dir[id / HTW_IDS_PER_CHUNK]);
	return chunk ? chunk + ((size_t)(id % HTW_IDS_PER_CHUNK) << h->obj_shift) :
		       NULL;
}

static u64 *htw_word(const struct htw_handles *h, void *obj)
{
	return obj + h->word_off;
}

static u64 htw_free_word(u64 gen, u32 next)
{
	return gen << (HTW_ID_BITS + 2) | (u64)next << 1 | 1;
}

static u64 htw_free_word_gen(u64 word)
{
	return word >> (HTW_ID_BITS + 2);
}

static u32 htw_free_word_next(u64 word)
{
	return (word >> 1) & HTW_ID_NONE;
}

static u64 htw_handle_make(const struct htw_handles *h, u32 id, u64 gen)
{
	return (gen << HTW_ID_BITS | id) ^ h->key;
}

static void htw_set_word(struct htw_handles *h, void *obj, u64 word)
{
	WRITE_ONCE(*htw_word(h, obj), word);
}

static int htw_handles_grow(struct htw_handles *h)
{
	u32 i, first;
	void *chunk;
	int ret = 0;

	mutex_lock(&h->grow_lock);
	if (READ_ONCE(h->head) != HTW_ID_NONE)
		goto out;	/* someone freed or grew meanwhile */
	if (h->used_chunks == h->nchunks) {
		ret = -ENOSPC;
		goto out;
	}
	chunk = kmem_cache_zalloc(h->chunks, GFP_KERNEL_ACCOUNT);
	if (!chunk) {
		ret = -ENOMEM;
		goto out;
	}
	first = h->used_chunks * HTW_IDS_PER_CHUNK;
	/* Generation 0 is never handed out; the chunk's ids in order. */
	for (i = 0; i + 1 < HTW_IDS_PER_CHUNK; i++)
		*htw_word(h, chunk + ((size_t)i << h->obj_shift)) =
			htw_free_word(1, first + i + 1);
	/* Objects before the pointer: lookups may race with growth. */
	smp_store_release(&h->dir[h->used_chunks], chunk);
	h->used_chunks++;
	spin_lock(&h->lock);
	/* Whatever was freed meanwhile goes after the new ids. */
	*htw_word(h, chunk + ((size_t)i << h->obj_shift)) = htw_free_word(1, h->head);
	h->head = first;
	spin_unlock(&h->lock);
out:
	mutex_unlock(&h->grow_lock);
	return ret;
}

/* Pop the top of the free stack; the caller holds @lock and saw one. */
static void *htw_free_pop_locked(struct htw_handles *h, u64 *handle)
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

void *htw_handle_get(struct htw_handles *h, u64 *handle)
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
EXPORT_SYMBOL_IF_HTW_TESTS(htw_handle_get);

/*
 * The id goes on top of the free stack, so the next timer reuses the
 * memory just given back, still in the cache.  An id whose generations
 * are used up is retired: its object stays free but off the stack, so no
 * handle is ever issued twice.
 */
void htw_handle_put(struct htw_handles *h, void *obj)
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
EXPORT_SYMBOL_IF_HTW_TESTS(htw_handle_put);

bool htw_handle_decode(const struct htw_handles *h, u64 handle, u32 *id,
		       u64 *gen)
{
	u64 raw = handle ^ h->key;

	*id = raw & HTW_ID_MASK;
	*gen = raw >> HTW_ID_BITS;
	return *gen && *gen <= HTW_GEN_MAX;
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_handle_decode);

void *htw_handle_lookup(struct htw_handles *h, u64 handle)
{
	u64 gen;
	u32 id;

	if (!htw_handle_decode(h, handle, &id, &gen))
		return NULL;
	return htw_id_object(h, id);
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_handle_lookup);

static u32 htw_handles_nchunks(u64 capacity)
{
	return DIV_ROUND_UP_ULL(capacity, HTW_IDS_PER_CHUNK);
}

size_t htw_handles_footprint(u64 capacity)
{
	return htw_handles_nchunks(capacity) * sizeof(void *);
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_handles_footprint);

size_t htw_handles_chunk_bytes(struct htw_handles *h)
{
	u32 chunks;

	mutex_lock(&h->grow_lock);
	chunks = h->used_chunks;
	mutex_unlock(&h->grow_lock);
	return ((size_t)chunks * HTW_IDS_PER_CHUNK) << h->obj_shift;
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_handles_chunk_bytes);

int htw_handles_init(struct htw_handles *h, u64 capacity, u64 key,
		     size_t size, size_t word_off, struct kmem_cache *chunks)
{
	BUILD_BUG_ON(HTW_ID_BITS + HTW_GEN_BITS > 63);
	BUILD_BUG_ON(HTW_ID_BITS + 2 + HTW_GEN_BITS != 64);
	h->dir = NULL;
	if (!capacity || capacity > BIT_ULL(HTW_ID_BITS) || !is_power_of_2(size) ||
	    size < sizeof(u64) || word_off % sizeof(u64) || word_off >= size ||
	    kmem_cache_size(chunks) < HTW_IDS_PER_CHUNK * size)
		return -EINVAL;
	h->chunks = chunks;
	h->key = key | HTW_HANDLE_KEY_TOP;
	h->nchunks = htw_handles_nchunks(capacity);
	h->capacity = capacity;
	h->obj_shift = ilog2(size);
	h->word_off = word_off;
	h->dir = kvcalloc(h->nchunks, sizeof(*h->dir), GFP_KERNEL_ACCOUNT);
	if (!h->dir)
		return -ENOMEM;
	mutex_init(&h->grow_lock);
	h->used_chunks = 0;
	spin_lock_init(&h->lock);
	h->head = HTW_ID_NONE;
	h->used = 0;
	return 0;
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_handles_init);

void htw_handles_destroy(struct htw_handles *h)
{
	u32 i;

	if (!h->dir)
		return;
	for (i = 0; i < h->used_chunks; i++)
		kmem_cache_free(h->chunks, h->dir[i]);
	kvfree(h->dir);
	h->dir = NULL;
	mutex_destroy(&h->grow_lock);
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_handles_destroy);

#ifdef HTW_TEST_HOOKS
/*
 * Make every free id look used @gen - 1 times already, so that a suite
 * can reach the end of the generations in a few calls.
 */
void htw_handles_age(struct htw_handles *h, u64 gen)
{
	u32 id, next;
	void *obj;

	spin_lock(&h->lock);
	for (id = h->head; id != HTW_ID_NONE; id = next) {
		obj = htw_id_object(h, id);
		next = htw_free_word_next(READ_ONCE(*htw_word(h, obj)));
		htw_set_word(h, obj, htw_free_word(gen, next));
	}
	spin_unlock(&h->lock);
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_handles_age);
#endif
