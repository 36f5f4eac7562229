/* SPDX-License-Identifier: MIT */
/*
 * A hash map from 64-bit keys to trivially copyable values on calloc, open addressing
 * with linear probing: what the runtime needs of std::unordered_map, without the C++
 * runtime library (see plain_vector.h). A failed growth leaves the map as it was and
 * the insertion fails.
 */
#ifndef ALLOCINFO_PLAIN_MAP_H
#define ALLOCINFO_PLAIN_MAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <type_traits>

namespace allocinfo {

template <typename V>
class plain_map {
	static_assert(std::is_trivially_copyable<V>::value, "plain_map holds plain values");

public:
	struct entry {
		uint64_t key;
		V value;
		uint8_t state;	/* EMPTY, FULL or GONE (a deleted entry, probed past) */
	};

	plain_map() = default;
	~plain_map() { free(table_); }
	plain_map(const plain_map &) = delete;
	plain_map &operator=(const plain_map &) = delete;

	V *find(uint64_t key)
	{
		entry *e = lookup(key);
		return e ? &e->value : nullptr;
	}

	/* 1 inserted, 0 the key was there already (left as it was), -1 no memory. */
	int insert(uint64_t key, const V &value)
	{
		if (find(key))
			return 0;
		if ((used_ + 1) * 4 > (mask_ + 1) * 3 && !grow())
			return -1;
		size_t i = slot(key);
		while (table_[i].state == FULL)
			i = (i + 1) & mask_;
		if (table_[i].state == EMPTY)
			used_++;
		table_[i] = entry{ key, value, FULL };
		size_++;
		return 1;
	}

	bool erase(uint64_t key)
	{
		entry *e = lookup(key);
		if (!e)
			return false;
		e->state = GONE;
		size_--;
		return true;
	}

	size_t size() const { return size_; }

	/* Calls f(key, value) for every entry, in no order. */
	template <typename F>
	void for_each(F f) const
	{
		for (size_t i = 0; table_ && i <= mask_; i++)
			if (table_[i].state == FULL)
				f(table_[i].key, table_[i].value);
	}

private:
	enum : uint8_t { EMPTY = 0, FULL = 1, GONE = 2 };

	entry *lookup(uint64_t key)
	{
		if (!table_)
			return nullptr;
		for (size_t i = slot(key);; i = (i + 1) & mask_) {
			entry &e = table_[i];
			if (e.state == EMPTY)
				return nullptr;
			if (e.state == FULL && e.key == key)
				return &e;
		}
	}

	size_t slot(uint64_t key) const
	{
		return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & mask_;
	}

	/* Rehashes into twice the room (or the same, when deletions fill it). */
	bool grow()
	{
		size_t cap = table_ ? (size_ * 2 > mask_ ? (mask_ + 1) * 2 : mask_ + 1) : 16;
		auto *t = static_cast<entry *>(calloc(cap, sizeof(entry)));
		if (!t)
			return false;
		entry *old = table_;
		size_t old_cap = table_ ? mask_ + 1 : 0;
		table_ = t;
		mask_ = cap - 1;
		used_ = 0;
		for (size_t i = 0; i < old_cap; i++)
			if (old[i].state == FULL) {
				size_t j = slot(old[i].key);
				while (table_[j].state == FULL)
					j = (j + 1) & mask_;
				table_[j] = old[i];
				used_++;
			}
		free(old);
		return true;
	}

	entry *table_ = nullptr;
	size_t mask_ = 0;
	size_t size_ = 0, used_ = 0;	/* FULL entries; FULL and GONE ones */
};

} /* namespace allocinfo */

#endif
