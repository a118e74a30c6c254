// SPDX-License-Identifier: GPL-2.0
/*
 * htwheel handle table: ids with generations, a FIFO free list, chunks
 * allocated on demand, lockless lookups.  See htw_handles.h.
 */
#include <linux/slab.h>

#include "htw_compat.h"
#include "htw_handles.h"
#include "htw_test_hooks.h"

static atomic64_t *htw_id_entry(struct htw_handles *h, u32 id)
{
	atomic64_t *chunk;

	if (id >= (u64)h->nchunks * HTW_IDS_PER_CHUNK)
		return NULL;
	/* Pairs with the release in htw_handles_grow(): entries initialised. */
	chunk = smp_load_acquire(&h->dir[id / HTW_IDS_PER_CHUNK]);
	return chunk ? &chunk[id % HTW_IDS_PER_CHUNK] : NULL;
}

static u64 htw_id_free_entry(u64 gen, u32 next)
{
	return gen << (HTW_ID_BITS + 2) | (u64)next << 1 | 1;
}

static u64 htw_id_entry_gen(u64 entry)
{
	return entry >> (HTW_ID_BITS + 2);
}

static u32 htw_id_entry_next(u64 entry)
{
	return (entry >> 1) & HTW_ID_NONE;
}

static u64 htw_handle_make(const struct htw_handles *h, u32 id, u64 gen)
{
	return (gen << HTW_ID_BITS | id) ^ h->key;
}

/* Append the chain first..last, already linked through its entries. */
static void htw_free_append_locked(struct htw_handles *h, u32 first, u32 last)
{
	atomic64_t *tail;
	u64 entry;

	lockdep_assert_held(&h->lock);
	if (h->tail == HTW_ID_NONE) {
		h->head = first;
	} else {
		tail = htw_id_entry(h, h->tail);
		entry = atomic64_read(tail);
		atomic64_set(tail, htw_id_free_entry(htw_id_entry_gen(entry), first));
	}
	h->tail = last;
}

static int htw_handles_grow(struct htw_handles *h)
{
	atomic64_t *chunk;
	u32 i, first;
	int ret = 0;

	mutex_lock(&h->grow_lock);
	if (READ_ONCE(h->head) != HTW_ID_NONE)
		goto out;	/* someone freed or grew meanwhile */
	if (h->used_chunks == h->nchunks) {
		ret = -ENOSPC;
		goto out;
	}
	chunk = kmalloc_array(HTW_IDS_PER_CHUNK, sizeof(*chunk),
			      GFP_KERNEL_ACCOUNT);
	if (!chunk) {
		ret = -ENOMEM;
		goto out;
	}
	first = h->used_chunks * HTW_IDS_PER_CHUNK;
	/* Generation 0 is never handed out. */
	for (i = 0; i < HTW_IDS_PER_CHUNK; i++)
		atomic64_set(&chunk[i], htw_id_free_entry(1, i + 1 < HTW_IDS_PER_CHUNK ?
							   first + i + 1 : HTW_ID_NONE));
	/* Entries before the pointer: lookups may race with growth. */
	smp_store_release(&h->dir[h->used_chunks], chunk);
	h->used_chunks++;
	spin_lock(&h->lock);
	htw_free_append_locked(h, first, first + HTW_IDS_PER_CHUNK - 1);
	spin_unlock(&h->lock);
out:
	mutex_unlock(&h->grow_lock);
	return ret;
}

int htw_handle_get(struct htw_handles *h, u64 *handle)
{
	u64 entry;
	u32 id;
	int ret;

	might_sleep();
	for (;;) {
		spin_lock(&h->lock);
		if (h->head != HTW_ID_NONE)
			break;
		spin_unlock(&h->lock);
		ret = htw_handles_grow(h);
		if (ret)
			return ret;
	}
	id = h->head;
	entry = atomic64_read(htw_id_entry(h, id));
	h->head = htw_id_entry_next(entry);
	if (h->head == HTW_ID_NONE)
		h->tail = HTW_ID_NONE;
	spin_unlock(&h->lock);
	*handle = htw_handle_make(h, id, htw_id_entry_gen(entry));
	return 0;
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_handle_get);

void htw_handle_set(struct htw_handles *h, u64 handle, void *obj)
{
	/* @obj's fields first: lookups may dereference it once it is set. */
	smp_wmb();
	atomic64_set(htw_id_entry(h, (handle ^ h->key) & HTW_ID_MASK),
		     (u64)(uintptr_t)obj);
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_handle_set);

/*
 * An id whose generations are used up is retired: its entry stays free
 * but off the list, so no handle is ever issued twice.
 */
void htw_handle_put(struct htw_handles *h, u64 handle)
{
	u64 raw = handle ^ h->key, gen = raw >> HTW_ID_BITS;
	u32 id = raw & HTW_ID_MASK;
	atomic64_t *slot = htw_id_entry(h, id);

	if (gen >= HTW_GEN_MAX) {
		atomic64_set(slot, htw_id_free_entry(0, HTW_ID_NONE));
		return;
	}
	spin_lock(&h->lock);
	atomic64_set(slot, htw_id_free_entry(gen + 1, HTW_ID_NONE));
	htw_free_append_locked(h, id, id);
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
	atomic64_t *slot;
	u64 entry, gen;
	u32 id;

	if (!htw_handle_decode(h, handle, &id, &gen))
		return NULL;
	slot = htw_id_entry(h, id);
	if (!slot)
		return NULL;
	entry = atomic64_read(slot);
	if (entry & 1)
		return NULL;
	return (void *)(uintptr_t)entry;
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_handle_lookup);

static u32 htw_handles_nchunks(u64 capacity)
{
	return DIV_ROUND_UP_ULL(capacity, HTW_IDS_PER_CHUNK);
}

size_t htw_handles_footprint(u64 capacity)
{
	return htw_handles_nchunks(capacity) * sizeof(atomic64_t *);
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_handles_footprint);

int htw_handles_init(struct htw_handles *h, u64 capacity, u64 key)
{
	BUILD_BUG_ON(HTW_ID_BITS + HTW_GEN_BITS > 63);
	BUILD_BUG_ON(HTW_ID_BITS + 2 + HTW_GEN_BITS != 64);
	h->key = key | HTW_HANDLE_KEY_TOP;
	h->nchunks = htw_handles_nchunks(capacity);
	h->dir = kvcalloc(h->nchunks, sizeof(*h->dir), GFP_KERNEL_ACCOUNT);
	if (!h->dir)
		return -ENOMEM;
	mutex_init(&h->grow_lock);
	h->used_chunks = 0;
	spin_lock_init(&h->lock);
	h->head = HTW_ID_NONE;
	h->tail = HTW_ID_NONE;
	return 0;
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_handles_init);

void htw_handles_destroy(struct htw_handles *h)
{
	u32 i;

	if (!h->dir)
		return;
	for (i = 0; i < h->used_chunks; i++)
		kfree(h->dir[i]);
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
	atomic64_t *slot;
	u32 id;

	spin_lock(&h->lock);
	for (id = h->head; id != HTW_ID_NONE; id = htw_id_entry_next(atomic64_read(slot))) {
		slot = htw_id_entry(h, id);
		atomic64_set(slot, htw_id_free_entry(gen, htw_id_entry_next(atomic64_read(slot))));
	}
	spin_unlock(&h->lock);
}
EXPORT_SYMBOL_IF_HTW_TESTS(htw_handles_age);
#endif
