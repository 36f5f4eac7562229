/* SPDX-License-Identifier: MIT */
/* Declared and built-in wrappers: the patterns and lists, and their address ranges in
 * each loaded object. */
#include "wrappers.h"

#include <elf.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "bare_name.h"
#include "nocancel.h"
#include "options.h"
#include "plain_vector.h"
#include "registry.h"
#include "suballoc.h"

namespace allocinfo {

namespace {

constexpr size_t MAX_PATTERNS = 64;
constexpr size_t MAX_PATTERN_LEN = 255;

/* The patterns, copied out of the environment at start-up (no allocation then). */
char g_pattern_buf[4096];
const char *g_patterns[MAX_PATTERNS];
size_t g_nr_patterns;

/* Built-in wrappers, each group on unless ALLOCINFO_WRAPPERS says "-GROUP". */
enum builtin_group : unsigned {
	GROUP_STD = 1,		/* the C++ standard library: transparent */
	GROUP_LIBC = 2,		/* the C library (all of libc.so, and a sanitizer's
				 * interceptors): transparent */
	GROUP_KNOWN = 4,	/* GLib's and the xmalloc families: named */
};
unsigned g_groups = GROUP_STD | GROUP_LIBC | GROUP_KNOWN;

/* Mangled prefixes of namespace std (St, and the abbreviations Sa allocator,
 * Sb basic_string, Ss string, Si/So/Sd streams) and __gnu_cxx, plain and const. */
const char *const std_prefixes[] = {
	"_ZNSt", "_ZNKSt", "_ZSt", "_ZNSa", "_ZNKSa", "_ZNSb", "_ZNKSb", "_ZNSs", "_ZNKSs",
	"_ZNSi", "_ZNSo", "_ZNSd", "_ZN9__gnu_cxx", "_ZNK9__gnu_cxx",
};

/* Common wrappers whose names are unambiguous: GLib's, and the GNU xmalloc family
 * (gnulib, libiberty, git, gcc). */
constexpr const char *known_names[] = {
	"g_malloc", "g_malloc0", "g_realloc", "g_try_malloc", "g_try_malloc0",
	"g_try_realloc", "g_malloc_n", "g_malloc0_n", "g_realloc_n", "g_try_malloc_n",
	"g_try_malloc0_n", "g_try_realloc_n", "g_strdup", "g_strndup", "g_memdup",
	"g_memdup2", "g_strdup_printf", "g_strdup_vprintf", "g_strconcat", "g_strjoin",
	"g_slice_alloc", "g_slice_alloc0", "g_aligned_alloc", "g_aligned_alloc0",
	"xmalloc", "xcalloc", "xrealloc", "xzalloc", "xstrdup", "xstrndup", "xmemdup",
	"xnmalloc", "xnrealloc", "xcharalloc", "xreallocarray", "xmallocz",
	"xmallocz_gently", "xmemdupz",
};

template <size_t N>
bool listed(const char *const (&list)[N], const char *name)
{
	for (const char *n : list)
		if (strcmp(n, name) == 0)
			return true;
	return false;
}

/* Every known name starts "g_" or "x", so most functions are told apart by their
 * first bytes: every tag's function is matched at start-up, and a large program has
 * thousands (38 strcmp calls each were 80% of a start-up with 10,000 call sites). */
constexpr bool known_prefix(const char *name)
{
	return (name[0] == 'g' && name[1] == '_') || name[0] == 'x';
}
constexpr bool all_known_prefixed()
{
	for (const char *n : known_names)
		if (!known_prefix(n))
			return false;
	return true;
}
static_assert(all_known_prefixed(), "known_prefix() must pass every known name");

bool known_name(const char *name)
{
	return known_prefix(name) && listed(known_names, name);
}

bool std_symbol(const char *name)
{
	if (name[0] != '_' || name[1] != 'Z')
		return false;
	for (const char *p : std_prefixes)
		if (strncmp(name, p, strlen(p)) == 0)
			return true;
	return false;
}

/* The header's own functions between a tagged call and the library: its out-of-line
 * helpers (allocinfo__strdup_n and the others, static: in .symtab) and, in C++, the
 * overloads that take the tag first (malloc(const alloc_tag *, size_t), mangled
 * _Z6mallocPK9alloc_tagm), which -O0 does not inline. A wrapper's tagged call is
 * charged above them, never to a line of the header. Transparent whatever the groups
 * say: they are allocinfo's. name is bare; parameters the mangled ones, or null. */
bool header_helper(const char *name, const char *parameters)
{
	return strncmp(name, "allocinfo__", 11) == 0 ||
	       (parameters && strncmp(parameters, "PK9alloc_tag", 12) == 0);
}

/* A static tag's function as the reports print it, in namespace std or __gnu_cxx. */
bool std_function(const char *name)
{
	return (name[0] == 's' && strncmp(name, "std::", 5) == 0) ||
	       (name[0] == '_' && strncmp(name, "__gnu_cxx::", 11) == 0);
}

bool basename_starts(const char *path, const char *prefix)
{
	const char *slash = strrchr(path, '/');
	return strncmp(slash ? slash + 1 : path, prefix, strlen(prefix)) == 0;
}

/* A sanitizer's runtime, whose interceptors stand in for the C library's functions
 * (printf, strdup): part of the C library's group. */
bool sanitizer_runtime(const char *path)
{
	return basename_starts(path, "libasan.so") || basename_starts(path, "libtsan.so") ||
	       basename_starts(path, "liblsan.so") || basename_starts(path, "libubsan.so");
}

struct range {
	uintptr_t start, end;
	uint32_t id;
};

struct object_ranges {
	uintptr_t lo, hi;
	bool transparent;		/* the whole object is (libstdc++) */
	plain_vector<range> ranges;	/* sorted by start */
};

/* Everything below: g_lock. Never held while calling into the loader. */
pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
plain_vector<object_ranges *> *g_objects;
const char *g_names[WRAPPER_MAX_IDS + 1];	/* by id; few, looked up by name rarely */
uint32_t g_nr_ids;

bool pattern_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       strchr("_*?[]!-:.$~<>", c) != nullptr;
}

bool matches_exactly(const char *name)
{
	for (size_t i = 0; i < g_nr_patterns; i++)
		if (fnmatch(g_patterns[i], name, 0) == 0)
			return true;
	return false;
}

/* A name, or the function the compiler cloned it from ("f.constprop.0", "f.isra.0",
 * "f.part.0", "f.cold" are f): the name a wrapper is known by then. */
const char *matching_name(const char *name, char *buf, size_t len)
{
	if (matches_exactly(name))
		return name;
	const char *dot = strchr(name, '.');
	if (!dot || dot == name || (size_t)(dot - name) >= len)
		return nullptr;
	memcpy(buf, name, (size_t)(dot - name));
	buf[dot - name] = '\0';
	return matches_exactly(buf) ? buf : nullptr;
}

/* A named wrapper, declared or known: the name it is known by, or null. */
const char *named_wrapper(const char *name, char *buf, size_t len)
{
	const char *n = g_nr_patterns ? matching_name(name, buf, len) : nullptr;
	if (!n && (g_groups & GROUP_KNOWN) && known_name(name))
		n = name;
	return n;
}

/* g_lock held. */
uint32_t id_for(const char *name)
{
	for (uint32_t id = 1; id <= g_nr_ids; id++)
		if (strcmp(g_names[id], name) == 0)
			return id;
	if (g_nr_ids + 1 >= WRAPPER_TRANSPARENT)
		return 0;
	char *copy = strdup(name);
	if (!copy)
		return 0;
	uint32_t id = ++g_nr_ids;
	__atomic_store_n(&g_names[id], copy, __ATOMIC_RELEASE);
	return id;
}

/* The matching functions of the ELF file at path, loaded with bias l_addr. Reads
 * .symtab when the file has one (a program's own static functions), else .dynsym. */
struct symbol_hit {
	uintptr_t start, end;
	char *name;	/* malloc'ed; null: transparent */
};

void scan_file(const char *path, uintptr_t l_addr, plain_vector<symbol_hit> &out)
{
	int fd = nocancel::open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		nocancel::close(fd);
		return;
	}
	size_t size = (size_t)st.st_size;
	void *m = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
	nocancel::close(fd);
	if (m == MAP_FAILED)
		return;
	const char *base = static_cast<const char *>(m);
	const auto *eh = reinterpret_cast<const Elf64_Ehdr *>(base);
	auto in_file = [size](uint64_t off, uint64_t len) { return off <= size && len <= size - off; };
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    !in_file(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr))) {
		munmap(m, size);
		return;
	}
	const auto *sh = reinterpret_cast<const Elf64_Shdr *>(base + eh->e_shoff);
	const Elf64_Shdr *symtab = nullptr;
	for (unsigned i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type == SHT_SYMTAB || (sh[i].sh_type == SHT_DYNSYM && !symtab))
			symtab = &sh[i];
	if (symtab && symtab->sh_link < eh->e_shnum &&
	    symtab->sh_entsize == sizeof(Elf64_Sym) && in_file(symtab->sh_offset, symtab->sh_size) &&
	    in_file(sh[symtab->sh_link].sh_offset, sh[symtab->sh_link].sh_size)) {
		const auto *syms = reinterpret_cast<const Elf64_Sym *>(base + symtab->sh_offset);
		const char *strs = base + sh[symtab->sh_link].sh_offset;
		uint64_t strs_size = sh[symtab->sh_link].sh_size;
		for (uint64_t i = 0, n = symtab->sh_size / sizeof(Elf64_Sym); i < n; i++) {
			const Elf64_Sym &s = syms[i];
			unsigned type = ELF64_ST_TYPE(s.st_info);
			if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF ||
			    s.st_size == 0 || s.st_name >= strs_size)
				continue;
			const char *name = strs + s.st_name;
			if (!memchr(name, 0, strs_size - s.st_name))
				continue;
			uintptr_t start = l_addr + s.st_value, end = start + s.st_size;
			/* A C++ function is matched by its bare name too, as its tags are. */
			char buf[256], bare[256];
			const char *parameters = mangled_bare_name(name, bare, sizeof(bare));
			const char *wn = named_wrapper(name, buf, sizeof(buf));
			if (!wn && parameters && !header_helper(bare, parameters))
				wn = named_wrapper(bare, buf, sizeof(buf));
			if (wn) {
				char *copy = strdup(wn);
				if (copy && !out.push_back({ start, end, copy }))
					free(copy);
			} else if (header_helper(parameters ? bare : name, parameters) ||
				   ((g_groups & GROUP_STD) && std_symbol(name))) {
				(void)out.push_back({ start, end, nullptr });
			}
		}
	}
	munmap(m, size);
}

/* g_lock held: the object's entry, or null. */
object_ranges *object_of(uintptr_t pc)
{
	for (object_ranges *o : *g_objects)
		if (pc >= o->lo && pc < o->hi)
			return o;
	return nullptr;
}

uint32_t lookup(object_ranges &o, uintptr_t pc)
{
	if (o.transparent)
		return WRAPPER_TRANSPARENT;
	const range *it = std::upper_bound(o.ranges.begin(), o.ranges.end(), pc,
				   [](uintptr_t a, const range &r) { return a < r.start; });
	/* Aliases share a range; a few symbols back covers them. */
	for (int i = 0; i < 4 && it != o.ranges.begin(); i++) {
		--it;
		if (pc < it->end)
			return it->id;
	}
	return 0;
}

} /* namespace */

namespace {

size_t g_pattern_used;	/* bytes of g_pattern_buf */

bool add_pattern(const char *var, const char *start, size_t len)
{
	if (g_nr_patterns == MAX_PATTERNS || g_pattern_used + len + 1 > sizeof(g_pattern_buf)) {
		log_message("%s: more than %zu wrappers; '%.*s' and the rest are ignored", var,
			    g_nr_patterns, (int)(len > 64 ? 64 : len), start);
		return false;
	}
	memcpy(g_pattern_buf + g_pattern_used, start, len);
	g_pattern_buf[g_pattern_used + len] = '\0';
	g_patterns[g_nr_patterns++] = g_pattern_buf + g_pattern_used;
	g_pattern_used += len + 1;
	return true;
}

/* What a kind of description must say (liballocs' language), and what it becomes. */
enum class signature_kind {
	wrapper,	/* a facade over malloc: a wrapper like ALLOCINFO_WRAPPERS' */
	suballoc,	/* an allocator of the program's own: its calls are counted */
	subfree,	/* its free */
};

struct signature_rules {
	const char *var;
	bool returns_pointer;	/* "...)p" */
	char significant;	/* the capital it must have ('Z' the size, 'P' the
				 * pointer freed), or 0: at most one */
	bool names_allocator;	/* "...)->ALLOCATOR" */
	signature_kind kind;
};

/* A description's parts, for those that are applied. */
struct signature_parts {
	const char *name_end;
	unsigned nr_args, significant;	/* the capital's position, from 0 */
	const char *allocator, *allocator_end;	/* after "->" */
};

bool ident_start(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }

/* One description, [start, end): why it is malformed, or null. */
const char *signature_fault(const signature_rules &r, const char *start, const char *end,
			    signature_parts &out)
{
	const char *c = start;
	if (c == end || !ident_start(*c))
		return "does not start with a function name";
	while (c < end && ident_char(*c))
		c++;
	out.name_end = c;
	if (c - start > 255)
		return "the name is longer than 255 bytes";
	if (c == end || *c != '(')
		return "no '(' after the name";
	int capitals = 0;
	bool significant = false;
	out.nr_args = 0;
	for (c++; c < end && *c != ')'; c++, out.nr_args++) {
		if (!strchr("zZpPiI", *c))
			return "an argument is not z, Z, p, P, i or I";
		if (*c >= 'A' && *c <= 'Z') {
			capitals++;
			if (*c == r.significant) {
				significant = true;
				out.significant = out.nr_args;
			}
		}
	}
	if (c == end)
		return "no ')'";
	if (capitals > 1)
		return "more than one significant (capital) argument";
	if (r.significant && !significant)
		return r.significant == 'Z' ? "no Z (the size argument)"
					    : "no P (the pointer freed)";
	/* An allocating function's name is its allocator's, which has 63 bytes. */
	if (r.kind == signature_kind::suballoc && out.name_end - start > 63)
		return "the name is longer than 63 bytes (it names the allocator)";
	if (r.kind != signature_kind::wrapper && out.nr_args > SUBALLOC_MAX_ARGS)
		return "more than 6 arguments";
	c++;
	if (r.returns_pointer) {
		if (c == end || *c != 'p')
			return "no return type p after ')'";
		c++;
	}
	if (r.names_allocator) {
		if (end - c < 3 || c[0] != '-' || c[1] != '>' || !ident_start(c[2]))
			return "no '->ALLOCATOR' after ')'";
		out.allocator = c + 2;
		for (c += 2; c < end && ident_char(*c); c++)
			;
		out.allocator_end = c;
		if (c - out.allocator > 63)
			return "the allocator's name is longer than 63 bytes";
	}
	if (c != end)
		return "unexpected text after the description";
	return nullptr;
}

/* ALLOCINFO_ALLOC_FNS and the others: blank or comma separated descriptions. */
void parse_signatures(const signature_rules &r, const char *label, const char *v)
{
	for (const char *p = v; *p;) {
		while (*p == ',' || *p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		const char *start = p;
		while (*p && *p != ',' && *p != ' ' && *p != '\t')
			p++;
		signature_parts parts{};
		if (const char *fault = signature_fault(r, start, p, parts)) {
			int len = (int)(p - start > 64 ? 64 : p - start);
			log_message("%s: '%.*s': %s; ignored", label, len, start, fault);
			continue;
		}
		size_t name_len = (size_t)(parts.name_end - start);
		bool taken;
		if (r.kind == signature_kind::wrapper)
			taken = add_pattern(label, start, name_len);
		else if (r.kind == signature_kind::suballoc)	/* the allocator: itself */
			taken = suballoc_declare(label, start, name_len, parts.significant, false,
						 start, name_len);
		else
			taken = suballoc_declare(label, start, name_len, parts.significant, true,
						 parts.allocator,
						 (size_t)(parts.allocator_end - parts.allocator));
		if (!taken)
			break;
	}
}

/* ALLOCINFO_WRAPPERS: names, patterns and built-in groups left out. */
void parse_wrapper_list(const char *label, const char *v)
{
	const char *p = v;
	while (*p) {
		while (*p == ',' || *p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		const char *start = p;
		while (*p && *p != ',' && *p != ' ' && *p != '\t')
			p++;
		size_t len = (size_t)(p - start);
		if (start[0] == '-') {	/* a built-in group left out */
			if (len == 4 && strncmp(start, "-std", 4) == 0)
				g_groups &= ~GROUP_STD;
			else if (len == 5 && strncmp(start, "-libc", 5) == 0)
				g_groups &= ~GROUP_LIBC;
			else if (len == 6 && strncmp(start, "-known", 6) == 0)
				g_groups &= ~GROUP_KNOWN;
			else
				log_message("%s: '%.*s' is not a built-in group (-std, -libc or "
					    "-known); ignored", label, (int)(len > 64 ? 64 : len), start);
			continue;
		}
		const char *bad = nullptr;
		for (const char *c = start; c < p && !bad; c++)
			if (!pattern_char_ok(*c))
				bad = c;
		if (bad || len > MAX_PATTERN_LEN) {
			log_message("%s: '%.*s' is not a function name or pattern (%s); ignored",
				    label, (int)(len > 64 ? 64 : len), start,
				    bad ? "unexpected character" : "too long");
			continue;
		}
		if (!add_pattern(label, start, len))
			break;
	}
}

/* The settings the program was built with (allocinfo-cc's options): name, value, ...,
 * null; the program's own static data. */
const char *const *g_built;

/* Calls parse(label, value) for var's value built into the program, then for the
 * environment's: both apply. */
template <typename Parse>
void each_setting(const char *var, Parse parse)
{
	for (const char *const *b = g_built; b && b[0] && b[1]; b += 2) {
		if (strcmp(b[0], var) == 0) {
			char label[64];
			snprintf(label, sizeof(label), "%s (built in)", var);
			parse(label, b[1]);
		}
	}
	if (const char *v = find_env(var))
		parse(var, v);
}

} /* namespace */

void wrappers_init()
{
	each_setting("ALLOCINFO_WRAPPERS", parse_wrapper_list);
	/* liballocs' descriptions: facades over malloc are wrappers like the above. */
	static const signature_rules kinds[] = {
		{ "ALLOCINFO_ALLOC_FNS", true, 0, false, signature_kind::wrapper },
		{ "ALLOCINFO_FREE_FNS", false, 'P', false, signature_kind::wrapper },
		/* Allocators of the program's own: their calls are routed to be counted. */
		{ "ALLOCINFO_SUBALLOC_FNS", true, 'Z', false, signature_kind::suballoc },
		{ "ALLOCINFO_SUBFREE_FNS", false, 'P', true, signature_kind::subfree },
	};
	for (const signature_rules &r : kinds)
		each_setting(r.var, [&r](const char *label, const char *v) {
			parse_signatures(r, label, v);
		});
	suballoc_route();
	if (!g_nr_patterns && !g_groups)
		return;
	busy_guard guard;
	g_objects = new plain_vector<object_ranges *>();
	g_names[0] = "";
}

bool wrappers_declared()
{
	return g_objects != nullptr;
}

namespace {

/* First sight of the object holding pc: its symbols read (outside every lock) and
 * its ranges kept; pc's wrapper. Out of line: what it needs is off every walk's
 * frames (a thread's stack may be PTHREAD_STACK_MIN bytes). */
[[gnu::noinline]] uint32_t wrapper_in_new_object(uintptr_t pc)
{
	uint32_t id = 0;
	object_ranges *o;
	busy_guard guard;
	object_info_block info;
	if (!info || !describe_object(pc, *info))
		return 0;	/* looked at again next time */
	const object_info &oi = *info;
	plain_vector<symbol_hit> hits;
	/* The standard libraries' own objects are transparent as a whole: their exported
	 * allocating functions (strdup, getline, open_memstream) and the internal ones
	 * (fopen's, a memstream's growth, qsort's buffer) alike. */
	bool transparent_object =
		((g_groups & GROUP_STD) && basename_starts(oi.path, "libstdc++.so")) ||
		((g_groups & GROUP_LIBC) && (basename_starts(oi.path, "libc.so") ||
					     sanitizer_runtime(oi.path)));
	if (!transparent_object)
		scan_file(oi.path, oi.l_addr, hits);
	pthread_mutex_lock(&g_lock);
	if (!(o = object_of(pc))) {
		auto *fresh = new object_ranges();
		fresh->lo = oi.lo;
		fresh->hi = oi.hi;
		fresh->transparent = transparent_object;
		for (const symbol_hit &h : hits) {
			uint32_t hid = !h.name ? WRAPPER_TRANSPARENT : id_for(h.name);
			if (hid)
				(void)fresh->ranges.push_back({ h.start, h.end, hid });
		}
		std::sort(fresh->ranges.begin(), fresh->ranges.end(),
			  [](const range &a, const range &b) { return a.start < b.start; });
		if (g_objects->push_back(fresh)) {
			o = fresh;
		} else {	/* no memory to keep it: looked at again next time */
			id = lookup(*fresh, pc);
			delete fresh;
		}
	}
	if (o)
		id = lookup(*o, pc);
	pthread_mutex_unlock(&g_lock);
	for (symbol_hit &h : hits)
		free(h.name);
	return id;
}

} /* namespace */

uint32_t wrapper_at(uintptr_t pc)
{
	if (!g_objects)
		return 0;
	pthread_mutex_lock(&g_lock);
	object_ranges *o = object_of(pc);
	uint32_t id = o ? lookup(*o, pc) : 0;
	pthread_mutex_unlock(&g_lock);
	return o ? id : wrapper_in_new_object(pc);
}

uint32_t wrapper_named(const char *func)
{
	if (!g_objects || !func)
		return 0;
	char buf[256];
	const char *n = named_wrapper(func, buf, sizeof(buf));
	if (!n)
		return (g_groups & GROUP_STD) && std_function(func) ? WRAPPER_TRANSPARENT : 0;
	busy_guard guard;
	pthread_mutex_lock(&g_lock);
	uint32_t id = id_for(n);
	pthread_mutex_unlock(&g_lock);
	return id;
}

const char *wrapper_name(uint32_t id)
{
	if (id == 0 || id >= WRAPPER_TRANSPARENT)
		return "";
	return __atomic_load_n(&g_names[id], __ATOMIC_ACQUIRE) ?: "";
}

void wrappers_forget(uintptr_t lo, uintptr_t hi)
{
	if (!g_objects)
		return;
	busy_guard guard;
	pthread_mutex_lock(&g_lock);
	plain_vector<object_ranges *> &v = *g_objects;
	size_t kept = 0;
	for (size_t i = 0; i < v.size(); i++) {
		if (v[i]->lo >= lo && v[i]->hi <= hi)
			delete v[i];
		else
			v[kept++] = v[i];
	}
	while (v.size() > kept)
		v.pop_back();
	pthread_mutex_unlock(&g_lock);
}

} /* namespace allocinfo */

/* Called from a program's .preinit_array, before any library's constructor, by the
 * object allocinfo-cc adds for --allocinfo-wrappers and the like: pairs of a variable's
 * name and a value, then null, applied before the environment's. Not for other use. */
extern "C" EXPORT void allocinfo__built_settings(const char *const *settings)
{
	allocinfo::g_built = settings;
}
