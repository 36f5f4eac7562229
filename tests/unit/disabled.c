/* SPDX-License-Identifier: MIT */
/*
 * Uses every macro of the header. Built twice from this one source: with the library,
 * and with -DALLOCINFO_DISABLE and without it, where every macro is the plain call.
 */
#include <allocinfo.h>

#include <dlfcn.h>
#include <stdio.h>

static void *xmalloc_noprof(size_t n)
{
	return malloc_noprof(n);
}
#define xmalloc(...) alloc_hooks(xmalloc_noprof(__VA_ARGS__))

int main(void)
{
	DEFINE_ALLOC_TAG(named);
	void *p;
	char *s, *a;
	void *(*fp)(size_t) = &malloc;	/* the real function, in both builds */
	void *q = fp(8);
	void *m = malloc(10), *c = calloc(2, 3), *r = realloc(NULL, 4);
	int rc = posix_memalign(&p, 64, 5);
	void *al = aligned_alloc(64, 64), *me = memalign(64, 6), *va = valloc(7),
	     *pv = pvalloc(8), *ra = reallocarray(NULL, 3, 3);
	s = strdup("x");
	char *sn = strndup("xyz", 2);
	int n = asprintf(&a, "%d", 42);
	void *w = xmalloc(9);
	void *t = alloc_hooks_tag(&named, malloc_noprof(11));
	{
		ALLOC_TAG_SCOPE();
		free(malloc(12));
	}
	int ok = m && c && r && rc == 0 && al && me && va && pv && ra && s && sn && n == 2 &&
		 w && t && q && allocinfo_print(-1) <= 0;
	void *loaded = dlsym(RTLD_DEFAULT, "allocinfo_print");
#ifdef ALLOCINFO_DISABLE
	ok = ok && !loaded && !allocinfo_enabled();	/* no library at all */
#else
	ok = ok && loaded && allocinfo_enabled();
#endif
	free(q); free(m); free(c); free(r); free(p); free(al); free(me); free(va); free(pv);
	free(ra); free(s); free(sn); free(a); free(w); free(t);
	puts(ok ? "ok" : "FAILED");
	return ok ? 0 : 1;
}
