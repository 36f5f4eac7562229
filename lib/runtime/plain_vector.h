/* SPDX-License-Identifier: MIT */
/*
 * A growable array of trivially copyable values on malloc/realloc: what the runtime
 * needs of std::vector, without the C++ runtime library (liballocinfo depends on libc
 * alone). A failed growth drops nothing already stored and returns false.
 */
#ifndef ALLOCINFO_PLAIN_VECTOR_H
#define ALLOCINFO_PLAIN_VECTOR_H

#include <stddef.h>
#include <stdlib.h>

#include <type_traits>

namespace allocinfo {

template <typename T>
class plain_vector {
	static_assert(std::is_trivially_copyable<T>::value, "plain_vector holds plain values");

public:
	plain_vector() = default;
	~plain_vector() { free(data_); }
	plain_vector(const plain_vector &) = delete;
	plain_vector &operator=(const plain_vector &) = delete;

	bool push_back(const T &v)
	{
		if (size_ == capacity_) {
			size_t c = capacity_ ? capacity_ * 2 : 8;
			void *p = realloc(data_, c * sizeof(T));
			if (!p)
				return false;
			data_ = static_cast<T *>(p);
			capacity_ = c;
		}
		data_[size_++] = v;
		return true;
	}
	void pop_back() { size_--; }
	T &back() { return data_[size_ - 1]; }
	T &operator[](size_t i) { return data_[i]; }
	size_t size() const { return size_; }
	bool empty() const { return size_ == 0; }
	T *begin() { return data_; }
	T *end() { return data_ + size_; }

private:
	T *data_ = nullptr;
	size_t size_ = 0, capacity_ = 0;
};

} /* namespace allocinfo */

#endif
