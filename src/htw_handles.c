// SPDX-License-Identifier: GPL-2.0
/*
 * htwheel handle table: ids with generations, a free stack kept in
 * the free objects' handle words, chunks of objects allocated on demand,
 * lockless lookups.  See htw_handles.h.
 */
#include <linux/err.h>
#include <linux/mm.h>

#include "htw_compat.h"
#include "htw_handles.h"

/* The slow path of htw_handle_get(): a new chunk of free ids. */
int htw_handles_grow(struct htw_handles *h)
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
	first = htw_chunk_id(h->used_chunks, 0);
	/* Generation 0 is never handed out; the chunk's ids in order. */
	for (i = 0; i + 1 < HTW_IDS_PER_CHUNK; i++)
		*htw_word(h, chunk + (size_t)i * h->obj_size) =
			htw_free_word(1, first + i + 1);
	/* Objects before the pointer: lookups may race with growth. */
	smp_store_release(&h->dir[h->used_chunks], chunk);
	h->used_chunks++;
	spin_lock(&h->lock);
	/* Whatever was freed meanwhile goes after the new ids. */
	*htw_word(h, chunk + (size_t)i * h->obj_size) = htw_free_word(1, h->head);
	h->head = first;
	spin_unlock(&h->lock);
out:
	mutex_unlock(&h->grow_lock);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(htw_handles_grow);

static u32 htw_handles_nchunks(u64 capacity)
{
	return DIV_ROUND_UP_ULL(capacity, HTW_IDS_PER_CHUNK);
}

size_t htw_handles_footprint(u64 capacity)
{
	return htw_handles_nchunks(capacity) * sizeof(void *);
}
EXPORT_SYMBOL_IF_KUNIT(htw_handles_footprint);

size_t htw_handles_chunk_bytes(struct htw_handles *h)
{
	u32 chunks;

	mutex_lock(&h->grow_lock);
	chunks = h->used_chunks;
	mutex_unlock(&h->grow_lock);
	return (size_t)chunks * HTW_IDS_PER_CHUNK * h->obj_size;
}
EXPORT_SYMBOL_IF_KUNIT(htw_handles_chunk_bytes);

int htw_handles_init(struct htw_handles *h, u64 capacity, u64 key,
		     size_t size, size_t word_off, struct kmem_cache *chunks)
{
	BUILD_BUG_ON(HTW_ID_BITS + HTW_GEN_BITS > 63);
	BUILD_BUG_ON(HTW_ID_BITS + 2 + HTW_GEN_BITS != 64);
	h->dir = NULL;
	BUILD_BUG_ON(HTW_CHUNK_INDEX_MASK + 1 < HTW_IDS_PER_CHUNK);
	if (!capacity || capacity > HTW_HANDLES_MAX || size % sizeof(u64) ||
	    !size || size > U16_MAX || word_off % sizeof(u64) || word_off >= size ||
	    kmem_cache_size(chunks) < HTW_IDS_PER_CHUNK * size)
		return -EINVAL;
	h->chunks = chunks;
	h->key = key | HTW_HANDLE_KEY_TOP;
	h->nchunks = htw_handles_nchunks(capacity);
	h->capacity = capacity;
	h->obj_size = size;
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
EXPORT_SYMBOL_IF_KUNIT(htw_handles_init);

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
EXPORT_SYMBOL_IF_KUNIT(htw_handles_destroy);

#ifdef HTW_TEST_BUILD
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
EXPORT_SYMBOL_IF_KUNIT(htw_handles_age);
#endif
