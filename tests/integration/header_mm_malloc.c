/* SPDX-License-Identifier: MIT */
/* SSE intrinsics after a tagged call (zstd): GCC's <mm_malloc.h> declares
 * posix_memalign() once the header's macros exist. */
#include <stdlib.h>

void *first(size_t n);
void *first(size_t n)
{
	return malloc(n);
}

#include <emmintrin.h>

int use(void);
int use(void)
{
	void *p = _mm_malloc(64, 16);
	__m128i z = _mm_setzero_si128();
	void *q = NULL;
	int r = posix_memalign(&q, 16, 32);
	_mm_free(p);
	free(q);
	return r + _mm_cvtsi128_si32(z);
}
