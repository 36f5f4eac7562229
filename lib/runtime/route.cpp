/* SPDX-License-Identifier: MIT */
/*
 * GOT rewriting for an allocator that comes before liballocinfo (route.h). Only
 * relocations the dynamic loader resolved by name are touched: PLT slots, GOT
 * entries of address-taken functions, and absolute data words holding exactly one
 * of the functions; each is replaced by our definition of the same name. Entries
 * inside the RELRO segment are made writable for the one store and read-only again.
 */
#include "route.h"

#include "allocator_api.h"
#include "backend.h"
#include "nocancel.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

namespace allocinfo {

namespace {

#if defined(__x86_64__)
constexpr uint32_t REL_SLOT = R_X86_64_JUMP_SLOT, REL_GOT = R_X86_64_GLOB_DAT,
		   REL_ABS = R_X86_64_64, REL_COPY = R_X86_64_COPY;
#elif defined(__aarch64__)
constexpr uint32_t REL_SLOT = R_AARCH64_JUMP_SLOT, REL_GOT = R_AARCH64_GLOB_DAT,
		   REL_ABS = R_AARCH64_ABS64, REL_COPY = R_AARCH64_COPY;
#else
#define ALLOCINFO_NO_ROUTING 1
#endif

/* Every entry point of ours that another allocator may define too. */
const char *const routed_names[] = {
	"malloc", "free", "calloc", "realloc", "reallocarray", "memalign", "aligned_alloc",
	"valloc", "pvalloc", "posix_memalign", "malloc_usable_size",
	"_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t",
	"_ZnwmSt11align_val_t", "_ZnamSt11align_val_t",
	"_ZnwmSt11align_val_tRKSt9nothrow_t", "_ZnamSt11align_val_tRKSt9nothrow_t",
	"_ZdlPv", "_ZdaPv", "_ZdlPvRKSt9nothrow_t", "_ZdaPvRKSt9nothrow_t",
	"_ZdlPvm", "_ZdaPvm", "_ZdlPvSt11align_val_t", "_ZdaPvSt11align_val_t",
	"_ZdlPvmSt11align_val_t", "_ZdaPvmSt11align_val_t",
	"_ZdlPvSt11align_val_tRKSt9nothrow_t", "_ZdaPvSt11align_val_tRKSt9nothrow_t",
	/* the header's calls that leave its inline path: only liballocinfo defines
	 * them, but routed entry points (routed_entry()) serve them faster */
	"allocinfo_malloc", "allocinfo_calloc", "allocinfo_realloc",
};
constexpr unsigned NR_ROUTED = sizeof(routed_names) / sizeof(routed_names[0]);
/* With the allocator's own functions that take a block (allocator_api.h). */
constexpr unsigned MAX_ROUTED = NR_ROUTED + ALLOCATOR_API_MAX;
/* What route_calls() routes, kept for objects loaded later. */
const char *g_routed[MAX_ROUTED];

/* Every member has an initializer: g_job is then initialized at compile time, since
 * routing runs from the library's constructor, before dynamic initializers. */
struct route_job {
	const char *const *names = nullptr;	/* the symbols to rewrite */
	unsigned nr_names = 0;	/* set_names() */
	uint32_t prefixes[MAX_ROUTED] = {};	/* each name's prefix_of() */
	uint32_t distinct[MAX_ROUTED] = {};	/* the prefixes, each once */
	unsigned nr_distinct = 0;
	uint64_t prefix_bits = 0;	/* prefix_bit() of each prefix */
	void *ours[MAX_ROUTED] = {};	/* what each entry gets (null: left alone) */
	const ElfW(Dyn) *only = nullptr;	/* just this object, when set */
	const ElfW(Dyn) *skip_dynamic = nullptr;	/* the allocator's */
	uintptr_t loader_base = 0, vdso_base = 0;
	unsigned rewritten = 0, failed = 0;
	/* Routing objects loaded later: only those after `after` (the dynamic section
	 * of the last object routed; all when null), and only while each is ready. */
	bool later = false;
	const ElfW(Dyn) *after = nullptr;
	bool after_seen = false, stopped = false;
	const ElfW(Dyn) *last_routed = nullptr;
};

/* Kept from the first routing, for objects loaded later. */
route_job g_job;
bool g_routing_busy;

/*
 * The data the executable holds copies of (its R_*_COPY relocations): a PIE, or a
 * program built without -fPIC, that refers to a library's variable gets the variable
 * itself, copied by the loader from the library's once the library's own relocations
 * had set its words, and every reference, the library's code's included, binds to the
 * copy. A word routed in the library's original (libxml2's `xmlFree = free`) is
 * routed in its copy too: left there, the allocator's free got blocks with a record
 * in front, 16 bytes into its own. Found once, before the first routing.
 */
struct copied_data {
	uintptr_t from, size, to;	/* the library's variable, and the copy */
};
constexpr unsigned MAX_COPIED = 1024;
copied_data g_copied[MAX_COPIED];
unsigned g_nr_copied;
uintptr_t g_copies_relro_start, g_copies_relro_end;	/* the executable's RELRO */

uintptr_t page_down(uintptr_t a)
{
	return a & ~((uintptr_t)sysconf(_SC_PAGESIZE) - 1);
}

#ifndef ALLOCINFO_NO_ROUTING

/* A name's first three characters as one word (with its end, when shorter). Most of
 * a C++ library's relocations name symbols that begin with _ZN or _ZT, and every
 * routed C++ name begins with _Zn or _Zd: comparing these words first rejects nearly
 * every relocation (whole names compared took 3 million instructions at each start
 * of a program whose allocator loads libstdc++). */
inline uint32_t prefix_of(const char *s)
{
	uint32_t p = (unsigned char)s[0];
	if (s[0]) {
		p |= (uint32_t)(unsigned char)s[1] << 8;
		if (s[1])
			p |= (uint32_t)(unsigned char)s[2] << 16;
	}
	return p;
}

/* One of 64 bits for a prefix: a relocation whose prefix's bit is clear (nearly
 * every one) is rejected by one test, before the list of prefixes is read. */
inline uint64_t prefix_bit(uint32_t p)
{
	return (uint64_t)1 << ((p * 0x9e3779b1u) >> 26);
}

void set_names(route_job *job, const char *const *names, unsigned nr)
{
	job->names = names;
	job->nr_names = nr;
	job->nr_distinct = 0;
	job->prefix_bits = 0;
	for (unsigned i = 0; i < nr; i++) {
		uint32_t p = prefix_of(names[i]);
		job->prefixes[i] = p;
		job->prefix_bits |= prefix_bit(p);
		unsigned j = 0;
		while (j < job->nr_distinct && job->distinct[j] != p)
			j++;
		if (j == job->nr_distinct)
			job->distinct[job->nr_distinct++] = p;
	}
}

int routed_index(const route_job *job, const char *name)
{
	uint32_t p = prefix_of(name);
	if (!(job->prefix_bits & prefix_bit(p)))
		return -1;	/* nearly every relocation */
	unsigned j = 0;
	while (j < job->nr_distinct && job->distinct[j] != p)
		j++;
	if (j == job->nr_distinct)
		return -1;	/* nearly every relocation */
	for (unsigned i = 0; i < job->nr_names; i++)
		if (job->prefixes[i] == p &&
		    (!(p >> 16) || !strcmp(name + 3, job->names[i] + 3)))	/* shorter: equal */
			return (int)i;
	return -1;
}

/* Stores fn at slot, lifting RELRO's protection around the store when needed. The
 * loader protects the whole pages of the segment only, [relro_start, relro_end)
 * here: the rest stays writable. */
bool store_entry(void **slot, void *fn, uintptr_t relro_start, uintptr_t relro_end)
{
	if (__atomic_load_n(slot, __ATOMIC_RELAXED) == fn)
		return true;
	uintptr_t a = (uintptr_t)slot;
	if (a >= relro_start && a + sizeof(void *) <= relro_end) {
		uintptr_t page = page_down(a);
		size_t len = (size_t)sysconf(_SC_PAGESIZE);
		if (mprotect((void *)page, len, PROT_READ | PROT_WRITE))
			return false;
		__atomic_store_n(slot, fn, __ATOMIC_RELEASE);
		mprotect((void *)page, len, PROT_READ);
		return true;
	}
	__atomic_store_n(slot, fn, __ATOMIC_RELEASE);
	return true;
}

/* The dynamic section's addresses: relocated in place by the loader where the section
 * is writable, offsets where it is not. */
uintptr_t dyn_address(uintptr_t value, uintptr_t base)
{
	return value < base ? value + base : value;
}

/* The copies of the word at `word`, a routed relocation's, get fn too. */
void route_copies_of(route_job *job, uintptr_t word, void *fn)
{
	for (unsigned i = 0; i < g_nr_copied; i++) {
		const copied_data &c = g_copied[i];
		uintptr_t off = word - c.from;
		if (off >= c.size || c.size - off < sizeof(void *))
			continue;
		if (store_entry((void **)(c.to + off), fn, g_copies_relro_start, g_copies_relro_end))
			job->rewritten++;
		else
			job->failed++;
	}
}

void route_table(route_job *job, uintptr_t base, const ElfW(Rela) *rela, size_t size,
		 const ElfW(Sym) *symtab, const char *strtab, uintptr_t relro_start,
		 uintptr_t relro_end)
{
	for (size_t i = 0; i < size / sizeof(*rela); i++) {
		uint32_t type = (uint32_t)ELF64_R_TYPE(rela[i].r_info);
		uint32_t sym = (uint32_t)ELF64_R_SYM(rela[i].r_info);
		if (!sym || (type != REL_SLOT && type != REL_GOT && type != REL_ABS))
			continue;
		if (type != REL_SLOT && rela[i].r_addend)
			continue;
		int k = routed_index(job, strtab + symtab[sym].st_name);
		if (k < 0 || !job->ours[k])
			continue;
		if (store_entry((void **)(base + rela[i].r_offset), job->ours[k], relro_start,
				relro_end))
			job->rewritten++;
		else
			job->failed++;
		if (type == REL_ABS && g_nr_copied)
			route_copies_of(job, base + rela[i].r_offset, job->ours[k]);
	}
}

/* The protection of the page holding addr (PROT_* bits), from /proc/self/maps (read
 * with system calls into the stack: this runs inside malloc); -1 when it cannot
 * tell. */
int page_protection(uintptr_t addr)
{
	int fd = nocancel::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	char buf[4096];
	size_t have = 0;
	int found = -1;
	for (;;) {
		ssize_t n = nocancel::read(fd, buf + have, sizeof(buf) - 1 - have);
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		char *line = buf, *nl;
		while ((nl = strchr(line, '\n'))) {
			*nl = '\0';
			char *end;
			uintptr_t start = strtoul(line, &end, 16), stop = 0;
			if (*end == '-')
				stop = strtoul(end + 1, &end, 16);
			if (addr >= start && addr < stop && *end == ' ' && strlen(end) > 4) {
				found = (end[1] == 'r' ? PROT_READ : 0) |
					(end[2] == 'w' ? PROT_WRITE : 0) |
					(end[3] == 'x' ? PROT_EXEC : 0);
				break;
			}
			line = nl + 1;
		}
		if (found >= 0)
			break;
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1)	/* a line longer than the buffer */
			have = 0;
	}
	nocancel::close(fd);
	return found;
}

/* The pages of an object's RELRO segment, as the loader protects them: [start, end),
 * empty when it has none. */
void relro_pages(uintptr_t base, const ElfW(Phdr) *phdr, size_t phnum, uintptr_t *start,
		 uintptr_t *end)
{
	*start = *end = 0;
	for (size_t i = 0; phdr && i < phnum; i++)
		if (phdr[i].p_type == PT_GNU_RELRO) {
			*start = page_down(base + phdr[i].p_vaddr);
			*end = page_down(base + phdr[i].p_vaddr + phdr[i].p_memsz);
		}
}

int route_object(struct dl_phdr_info *info, size_t, void *arg)
{
	auto *job = static_cast<route_job *>(arg);
	uintptr_t base = info->dlpi_addr;
	const ElfW(Dyn) *dynamic = nullptr;
	uintptr_t relro_start, relro_end;
	relro_pages(base, info->dlpi_phdr, info->dlpi_phnum, &relro_start, &relro_end);
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_DYNAMIC)
			dynamic = reinterpret_cast<const ElfW(Dyn) *>(base + ph->p_vaddr);
	}
	if (job->later) {
		if (job->stopped)
			return 0;
		if (job->after && !job->after_seen) {
			job->after_seen = dynamic == job->after;
			return 0;
		}
		/* Still being relocated (its RELRO not protected yet): later. */
		if (relro_start < relro_end) {
			int prot = page_protection(relro_start);
			if (prot < 0 || (prot & PROT_WRITE)) {
				job->stopped = true;
				return 0;
			}
		}
		job->last_routed = dynamic;
	}
	if ((base == job->loader_base && base) || (base == job->vdso_base && base))
		return 0;
	if (!dynamic || dynamic == job->skip_dynamic || (job->only && dynamic != job->only))
		return 0;
	const ElfW(Sym) *symtab = nullptr;
	const char *strtab = nullptr;
	const ElfW(Rela) *rela = nullptr, *jmprel = nullptr;
	size_t rela_size = 0, jmprel_size = 0, relative = 0;
	bool plt_is_rela = true;
	for (const ElfW(Dyn) *d = dynamic; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB: symtab = (const ElfW(Sym) *)dyn_address(d->d_un.d_ptr, base); break;
		case DT_STRTAB: strtab = (const char *)dyn_address(d->d_un.d_ptr, base); break;
		case DT_RELA: rela = (const ElfW(Rela) *)dyn_address(d->d_un.d_ptr, base); break;
		case DT_RELASZ: rela_size = d->d_un.d_val; break;
		case DT_RELACOUNT: relative = d->d_un.d_val; break;
		case DT_JMPREL: jmprel = (const ElfW(Rela) *)dyn_address(d->d_un.d_ptr, base); break;
		case DT_PLTRELSZ: jmprel_size = d->d_un.d_val; break;
		case DT_PLTREL: plt_is_rela = d->d_un.d_val == DT_RELA; break;
		}
	}
	if (!symtab || !strtab)
		return 0;
	/* The linker puts the R_*_RELATIVE relocations, which name no symbol, first
	 * and counts them: most of a large library's, skipped at once. */
	if (rela && relative <= rela_size / sizeof(*rela))
		route_table(job, base, rela + relative, rela_size - relative * sizeof(*rela), symtab,
			    strtab, relro_start, relro_end);
	if (jmprel && plt_is_rela)
		route_table(job, base, jmprel, jmprel_size, symtab, strtab, relro_start, relro_end);
	return 0;
}

#endif /* !ALLOCINFO_NO_ROUTING */

/* An object's dynamic symbol and string tables, its hash tables, and its RELA
 * relocations. */
struct dynamic_tables {
	const ElfW(Sym) *symtab = nullptr;
	const char *strtab = nullptr;
	const uint32_t *gnu_hash = nullptr;
	const uint32_t *sysv_hash = nullptr;
	const ElfW(Rela) *rela = nullptr;
	size_t rela_size = 0;
};

dynamic_tables tables_of(const struct link_map *map)
{
	dynamic_tables t;
	for (const ElfW(Dyn) *d = map->l_ld; d && d->d_tag != DT_NULL; d++) {
		uintptr_t v = d->d_un.d_ptr < map->l_addr ? d->d_un.d_ptr + map->l_addr
							  : d->d_un.d_ptr;
		switch (d->d_tag) {
		case DT_SYMTAB: t.symtab = (const ElfW(Sym) *)v; break;
		case DT_STRTAB: t.strtab = (const char *)v; break;
		case DT_GNU_HASH: t.gnu_hash = (const uint32_t *)v; break;
		case DT_HASH: t.sysv_hash = (const uint32_t *)v; break;
		case DT_RELA: t.rela = (const ElfW(Rela) *)v; break;
		case DT_RELASZ: t.rela_size = d->d_un.d_val; break;
		}
	}
	return t;
}

bool defines(const ElfW(Sym) *sym, const char *strtab, const char *name)
{
	return sym->st_shndx != SHN_UNDEF && sym->st_value &&
	       ELF64_ST_TYPE(sym->st_info) != STT_GNU_IFUNC && !strcmp(strtab + sym->st_name, name);
}

const ElfW(Sym) *linear_entry(const dynamic_tables &t, uint32_t count, const char *name)
{
	for (uint32_t i = 1; i < count; i++)
		if (defines(&t.symtab[i], t.strtab, name))
			return &t.symtab[i];
	return nullptr;
}

/* The entry of `name` in the object's own dynamic symbol table, defined there. */
const ElfW(Sym) *symbol_entry(const struct link_map *map, const char *name)
{
	dynamic_tables t = tables_of(map);
	if (!t.symtab || !t.strtab)
		return nullptr;
	if (!t.gnu_hash)	/* only DT_HASH: its chain count is the symbol count */
		return t.sysv_hash ? linear_entry(t, t.sysv_hash[1], name) : nullptr;
	uint32_t h = 5381;
	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		h = h * 33 + *c;
	uint32_t nbuckets = t.gnu_hash[0], symoffset = t.gnu_hash[1], bloom_words = t.gnu_hash[2];
	if (!nbuckets)
		return nullptr;
	const uint32_t *buckets = reinterpret_cast<const uint32_t *>(
		reinterpret_cast<const ElfW(Addr) *>(t.gnu_hash + 4) + bloom_words);
	const uint32_t *chain = buckets + nbuckets;
	uint32_t i = buckets[h % nbuckets];
	if (i < symoffset)
		return nullptr;
	for (;; i++) {
		uint32_t hh = chain[i - symoffset];
		const ElfW(Sym) *sym = &t.symtab[i];
		if ((hh | 1) == (h | 1) && defines(sym, t.strtab, name))
			return sym;
		if (hh & 1)
			return nullptr;
	}
}

#ifndef ALLOCINFO_NO_ROUTING
/* Fills g_copied from the executable's copy relocations: each copy's source is the
 * variable's definition the loader copied, the first after the executable in lookup
 * order. Variables too small to hold a pointer are left out. */
void find_copies()
{
	struct link_map *exe = _r_debug.r_map;
	if (!exe || g_nr_copied)
		return;
	dynamic_tables t = tables_of(exe);
	const ElfW(Rela) *rela = t.rela;
	if (!rela || !t.symtab || !t.strtab)
		return;
	for (size_t i = 0; i < t.rela_size / sizeof(*rela) && g_nr_copied < MAX_COPIED; i++) {
		if (ELF64_R_TYPE(rela[i].r_info) != REL_COPY)
			continue;
		const ElfW(Sym) *sym = &t.symtab[ELF64_R_SYM(rela[i].r_info)];
		if (sym->st_size < sizeof(void *))
			continue;
		const char *name = t.strtab + sym->st_name;
		for (struct link_map *m = exe->l_next; m; m = m->l_next) {
			const ElfW(Sym) *def = symbol_entry(m, name);
			if (!def)
				continue;
			g_copied[g_nr_copied++] = { m->l_addr + def->st_value, sym->st_size,
						    exe->l_addr + rela[i].r_offset };
			break;
		}
	}
	relro_pages(exe->l_addr, (const ElfW(Phdr) *)getauxval(AT_PHDR), getauxval(AT_PHNUM),
		    &g_copies_relro_start, &g_copies_relro_end);
}
#endif

/* The protection that the loaded object at `base` gives the page holding addr, from
 * its program headers (its segment's flags; read-only once relocated, in RELRO); -1
 * when none of its segments holds addr. No system call: asked once a symbol. */
struct segment_query {
	uintptr_t base, addr;
	int prot;
};

int segment_of(struct dl_phdr_info *info, size_t, void *arg)
{
	auto *q = static_cast<segment_query *>(arg);
	if (info->dlpi_addr != q->base)
		return 0;
	int prot = -1;
	bool relro = false;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = q->base + ph->p_vaddr;
		if (q->addr < start || q->addr - start >= ph->p_memsz)
			continue;
		if (ph->p_type == PT_LOAD)
			prot = (ph->p_flags & PF_R ? PROT_READ : 0) |
			       (ph->p_flags & PF_W ? PROT_WRITE : 0) |
			       (ph->p_flags & PF_X ? PROT_EXEC : 0);
		else if (ph->p_type == PT_GNU_RELRO)
			relro = true;
	}
	if (prot < 0)
		return 0;
	q->prot = relro ? prot & ~PROT_WRITE : prot;
	return 1;
}

int segment_protection(uintptr_t base, uintptr_t addr)
{
	segment_query q = { base, addr, -1 };
	dl_iterate_phdr(segment_of, &q);
	return q.prot;
}

} /* namespace */

void *defined_symbol(const struct link_map *map, const char *name)
{
	const ElfW(Sym) *sym = symbol_entry(map, name);
	return sym ? reinterpret_cast<void *>(map->l_addr + sym->st_value) : nullptr;
}

/* Stores value at `at`, a word of the object at `base`, lifting the page's protection
 * for the one store if it must (RELRO). Never where code lies on the same page: it
 * would not run while unwritable. */
bool store_in_object(uintptr_t base, uintptr_t *at, uintptr_t value)
{
	int prot = segment_protection(base, (uintptr_t)at);
	if (prot < 0 || (prot & PROT_EXEC))
		return false;
	if (prot & PROT_WRITE) {
		__atomic_store_n(at, value, __ATOMIC_RELEASE);
		return true;
	}
	void *page = reinterpret_cast<void *>(page_down((uintptr_t)at));
	size_t len = (size_t)sysconf(_SC_PAGESIZE);
	if (mprotect(page, len, prot | PROT_WRITE))
		return false;
	__atomic_store_n(at, value, __ATOMIC_RELEASE);
	mprotect(page, len, prot);
	return true;
}

bool redirect_symbol(const struct link_map *map, const char *name, void *fn)
{
	auto *sym = const_cast<ElfW(Sym) *>(symbol_entry(map, name));
	if (!sym)
		return false;
	static_assert(sizeof(sym->st_value) == sizeof(uintptr_t), "a symbol's value is a word");
	return store_in_object(map->l_addr, reinterpret_cast<uintptr_t *>(&sym->st_value),
			       (uintptr_t)fn - map->l_addr);	/* the loader adds l_addr back */
}

unsigned redirect_virtual(const struct link_map *map, const char *vtable, const char *method,
			  void *fn)
{
	const ElfW(Sym) *vt = symbol_entry(map, vtable);
	uintptr_t target = (uintptr_t)defined_symbol(map, method);
	if (!vt || !target || ELF64_ST_TYPE(vt->st_info) != STT_OBJECT)
		return 0;
	auto *slot = reinterpret_cast<uintptr_t *>(map->l_addr + vt->st_value);
	unsigned done = 0;
	for (size_t i = 0; i < vt->st_size / sizeof(uintptr_t); i++)
		if (__atomic_load_n(&slot[i], __ATOMIC_RELAXED) == target &&
		    store_in_object(map->l_addr, &slot[i], (uintptr_t)fn))
			done++;
	return done;
}

bool code_range(uintptr_t base, uintptr_t *lo, uintptr_t *hi)
{
	struct query {
		uintptr_t base, lo, hi;
	} q = { base, UINTPTR_MAX, 0 };
	dl_iterate_phdr(
		[](struct dl_phdr_info *info, size_t, void *arg) {
			auto *found = static_cast<query *>(arg);
			if (info->dlpi_addr != found->base || !info->dlpi_name || !info->dlpi_name[0])
				return 0;	/* another object, or the program itself */
			for (int i = 0; i < info->dlpi_phnum; i++) {
				const ElfW(Phdr) &ph = info->dlpi_phdr[i];
				if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
					continue;
				uintptr_t start = found->base + ph.p_vaddr;
				if (start < found->lo)
					found->lo = start;
				if (start + ph.p_memsz > found->hi)
					found->hi = start + ph.p_memsz;
			}
			return 1;
		},
		&q);
	if (q.lo >= q.hi)
		return false;
	*lo = q.lo;
	*hi = q.hi;
	return true;
}

#ifndef ALLOCINFO_NO_ROUTING
struct rewrite_counts {
	unsigned rewritten, failed;
};

/* Points the GOT entries for names[i] (nr of them, at most MAX_ROUTED) at fns[i]
 * (null: left alone), in every loaded object, or only in the one whose dynamic
 * section is `only`. */
static rewrite_counts rewrite_entries(const char *const *names, void *const *fns,
				      unsigned nr, const ElfW(Dyn) *only)
{
	route_job job{};
	set_names(&job, names, nr);
	for (unsigned i = 0; i < nr; i++)
		job.ours[i] = fns[i];
	job.only = only;
	job.loader_base = getauxval(AT_BASE);
	job.vdso_base = getauxval(AT_SYSINFO_EHDR);
	dl_iterate_phdr(route_object, &job);
	return { job.rewritten, job.failed };
}

/*
 * The allocator's own calls that free a block, which route_calls() otherwise leaves
 * to it: a block another object made with malloc (glibc's realpath() and strdup():
 * the library's, with its record) can come back to the allocator there. mimalloc's
 * mi_realpath() frees realpath()'s result with free(), and a std::string that
 * libstdc++ made can be destroyed by the allocator's inline code. The library's free
 * and delete hand every other block to the allocator as it is. Its calls that make
 * or resize a block stay its own: it frees those itself, not always through its GOT.
 * `ours` holds the entry points route_calls() found for routed_names.
 */
unsigned route_allocator_frees(struct link_map *allocator, void *const *ours)
{
	static const char *const frees[] = {
		"free", "_ZdlPv", "_ZdaPv", "_ZdlPvRKSt9nothrow_t", "_ZdaPvRKSt9nothrow_t",
		"_ZdlPvm", "_ZdaPvm", "_ZdlPvSt11align_val_t", "_ZdaPvSt11align_val_t",
		"_ZdlPvmSt11align_val_t", "_ZdaPvmSt11align_val_t",
		"_ZdlPvSt11align_val_tRKSt9nothrow_t", "_ZdaPvSt11align_val_tRKSt9nothrow_t",
		"malloc_usable_size",
	};
	constexpr unsigned NR_FREES = sizeof(frees) / sizeof(frees[0]);
	void *fns[NR_FREES] = {};
	for (unsigned i = 0; i < NR_FREES; i++)
		for (unsigned j = 0; j < NR_ROUTED; j++)
			if (!strcmp(frees[i], routed_names[j]))
				fns[i] = ours[j];
	return rewrite_entries(frees, fns, NR_FREES, allocator->l_ld).rewritten;
}

/*
 * An allocator that comes after the library (underneath::next) has its own calls of
 * the functions that make a block bound to the library's, the first definition in
 * lookup order. Electric Fence's malloc() calls memalign() so: the library's
 * memalign() of a small alignment handed it to the allocator's malloc(), which called
 * memalign() again, until the stack ran out. These entries are pointed at the
 * definition the loader would have bound without the library (the allocator's own,
 * mostly), as they stay its own when it comes first. Its calls that free or measure a
 * block stay the library's, which hands a block without a record back as it is: a
 * block with a record can reach the allocator there, as when it comes first
 * (route_allocator_frees()).
 */
unsigned route_allocator_makes(struct link_map *allocator, struct link_map *self)
{
	static const char *const makes[] = {
		"malloc", "calloc", "realloc", "reallocarray", "memalign", "aligned_alloc",
		"valloc", "pvalloc", "posix_memalign", "_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t",
		"_ZnamRKSt9nothrow_t", "_ZnwmSt11align_val_t", "_ZnamSt11align_val_t",
		"_ZnwmSt11align_val_tRKSt9nothrow_t", "_ZnamSt11align_val_tRKSt9nothrow_t",
	};
	constexpr unsigned NR_MAKES = sizeof(makes) / sizeof(makes[0]);
	void *fns[NR_MAKES] = {};
	for (unsigned i = 0; i < NR_MAKES; i++)
		for (struct link_map *m = _r_debug.r_map; m && !fns[i]; m = m->l_next)
			if (m != self)
				fns[i] = defined_symbol(m, makes[i]);
	return rewrite_entries(makes, fns, NR_MAKES, allocator->l_ld).rewritten;
}
#else
unsigned route_allocator_makes(struct link_map *, struct link_map *)
{
	return 0;
}
#endif

unsigned route_calls(struct link_map *allocator, struct link_map *self, bool malloc_family)
{
#ifdef ALLOCINFO_NO_ROUTING
	(void)allocator;
	(void)self;
	(void)malloc_family;
	return 0;
#else
	route_job &job = g_job;
	unsigned nr = 0;
	for (; malloc_family && nr < NR_ROUTED; nr++) {
		g_routed[nr] = routed_names[nr];
		if (!(job.ours[nr] = routed_entry(routed_names[nr])))
			job.ours[nr] = defined_symbol(self, routed_names[nr]);
	}
	nr += allocator_api_entries(allocator, self, g_routed + nr, job.ours + nr,
				    MAX_ROUTED - nr);
	if (!nr)
		return 0;
	set_names(&job, g_routed, nr);
	find_copies();
	job.skip_dynamic = allocator->l_ld;
	job.loader_base = getauxval(AT_BASE);
	job.vdso_base = getauxval(AT_SYSINFO_EHDR);
	dl_iterate_phdr(route_object, &job);
	unsigned rewritten = job.rewritten;
	if (malloc_family)
		rewritten += route_allocator_frees(allocator, job.ours);
	struct link_map *last = _r_debug.r_map;
	while (last && last->l_next)
		last = last->l_next;
	if (last)
		__atomic_store_n(&g_route_tail, last, __ATOMIC_RELEASE);
	return rewritten;
#endif
}

unsigned route_symbols(const char *const *names, void *const *fns, unsigned nr)
{
#ifdef ALLOCINFO_NO_ROUTING
	(void)names;
	(void)fns;
	(void)nr;
	return 0;
#else
	if (nr > MAX_ROUTED)
		nr = MAX_ROUTED;
	return rewrite_entries(names, fns, nr, nullptr).rewritten;
#endif
}

struct link_map g_no_route_tail;
struct link_map *g_route_tail = &g_no_route_tail;

bool redirect_backend(struct link_map *self, void *const fns[NR_BACKEND])
{
#ifdef ALLOCINFO_NO_ROUTING
	(void)self;
	(void)fns;
	return false;
#else
	static const char *const names[NR_BACKEND] = {
		"__libc_malloc", "__libc_calloc", "__libc_realloc", "__libc_free", "__libc_memalign",
	};
	rewrite_counts done = rewrite_entries(names, fns, NR_BACKEND, self->l_ld);
	/* Each entry must now lead to the allocator, or none may: a block must never be
	 * made by one and freed by the other. */
	bool all = done.rewritten >= NR_BACKEND && !done.failed;
	for (unsigned i = 0; i < NR_BACKEND && all; i++)
		all = backend::got_entry(i) == fns[i];
	return all;
#endif
}

namespace {

/* The loader's list entry whose dynamic section is `dynamic`, or null. */
struct link_map *map_of(const ElfW(Dyn) *dynamic)
{
	for (struct link_map *m = _r_debug.r_map; m; m = m->l_next)
		if (m->l_ld == dynamic)
			return m;
	return nullptr;
}

/* Routes the objects after `after` (all when null) that are ready, and makes the
 * last of them the tail. One thread at a time; the others go on meanwhile. */
void route_after(const ElfW(Dyn) *after)
{
#ifndef ALLOCINFO_NO_ROUTING
	if (__atomic_exchange_n(&g_routing_busy, true, __ATOMIC_ACQUIRE))
		return;
	route_job &job = g_job;
	job.later = true;
	job.after = after;
	job.after_seen = job.stopped = false;
	job.last_routed = nullptr;
	/* dl_iterate_phdr holds the loader's lock while it walks the list. */
	dl_iterate_phdr(route_object, &job);
	const ElfW(Dyn) *last = job.last_routed ? job.last_routed : after;
	struct link_map *tail = last ? map_of(last) : nullptr;
	if (!tail && !job.stopped) {
		/* The last one routed is in another namespace (dlmopen): everything in
		 * the main list was routed, so its end is the tail. */
		for (tail = _r_debug.r_map; tail && tail->l_next; tail = tail->l_next)
			;
	}
	if (tail)
		__atomic_store_n(&g_route_tail, tail, __ATOMIC_RELEASE);
	__atomic_store_n(&g_routing_busy, false, __ATOMIC_RELEASE);
#else
	(void)after;
#endif
}

const ElfW(Dyn) *g_tail_before_dlclose;

} /* namespace */

void route_new_objects()
{
	struct link_map *tail = __atomic_load_n(&g_route_tail, __ATOMIC_ACQUIRE);
	if (tail != &g_no_route_tail)
		route_after(tail->l_ld);
}

void route_fork_child()
{
	/* A thread that was routing in the parent does not exist in the child. */
	__atomic_store_n(&g_routing_busy, false, __ATOMIC_RELAXED);
}

void route_before_dlclose()
{
	struct link_map *tail = __atomic_exchange_n(&g_route_tail, &g_no_route_tail,
						    __ATOMIC_ACQ_REL);
	if (tail != &g_no_route_tail)
		g_tail_before_dlclose = tail->l_ld;
}

void route_after_dlclose()
{
	if (!g_tail_before_dlclose)
		return;
	/* Whatever dlclose unloaded, every object still loaded is looked at again:
	 * routing an object twice stores nothing. */
	route_after(nullptr);
}

} /* namespace allocinfo */
