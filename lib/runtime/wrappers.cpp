/* SPDX-License-Identifier: MIT */
/* Declared wrappers: the patterns, and their address ranges in each loaded object. */
#include "wrappers.h"

#include <elf.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "options.h"
#include "registry.h"

namespace allocinfo {

namespace {

constexpr size_t MAX_PATTERNS = 64;
constexpr size_t MAX_PATTERN_LEN = 255;

/* The patterns, copied out of the environment at start-up (no allocation then). */
char g_pattern_buf[4096];
const char *g_patterns[MAX_PATTERNS];
size_t g_nr_patterns;

struct range {
	uintptr_t start, end;
	uint32_t id;
};

struct object_ranges {
	uintptr_t lo, hi;
	std::vector<range> ranges;	/* sorted by start */
};

/* Everything below: g_lock. Never held while calling into the loader. */
pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
std::vector<object_ranges> *g_objects;
std::unordered_map<std::string, uint32_t> *g_ids;
const char *g_names[WRAPPER_MAX_IDS + 1];
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

bool matches(const char *name)
{
	char buf[256];
	return matching_name(name, buf, sizeof(buf)) != nullptr;
}

/* g_lock held. */
uint32_t id_for(const char *name)
{
	auto it = g_ids->find(name);
	if (it != g_ids->end())
		return it->second;
	if (g_nr_ids >= WRAPPER_MAX_IDS)
		return 0;
	uint32_t id = ++g_nr_ids;
	g_names[id] = strdup(name);
	g_ids->emplace(name, id);
	return id;
}

/* The matching functions of the ELF file at path, loaded with bias l_addr. Reads
 * .symtab when the file has one (a program's own static functions), else .dynsym. */
struct symbol_hit {
	uintptr_t start, end;
	std::string name;
};

void scan_file(const char *path, uintptr_t l_addr, std::vector<symbol_hit> &out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return;
	}
	size_t size = (size_t)st.st_size;
	void *m = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
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
			char buf[256];
			if (!memchr(name, 0, strs_size - s.st_name) ||
			    !(name = matching_name(name, buf, sizeof(buf))))
				continue;
			out.push_back({ l_addr + s.st_value, l_addr + s.st_value + s.st_size, name });
		}
	}
	munmap(m, size);
}

/* g_lock held: the object's entry, or null. */
object_ranges *object_of(uintptr_t pc)
{
	for (object_ranges &o : *g_objects)
		if (pc >= o.lo && pc < o.hi)
			return &o;
	return nullptr;
}

uint32_t lookup(const object_ranges &o, uintptr_t pc)
{
	auto it = std::upper_bound(o.ranges.begin(), o.ranges.end(), pc,
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

void wrappers_init()
{
	const char *v = find_env("ALLOCINFO_WRAPPERS");
	if (!v)
		return;
	size_t used = 0;
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
		const char *bad = nullptr;
		for (const char *c = start; c < p && !bad; c++)
			if (!pattern_char_ok(*c))
				bad = c;
		if (bad || len > MAX_PATTERN_LEN) {
			log_message("ALLOCINFO_WRAPPERS: '%.*s' is not a function name or pattern "
				    "(%s); ignored", (int)(len > 64 ? 64 : len), start,
				    bad ? "unexpected character" : "too long");
			continue;
		}
		if (g_nr_patterns == MAX_PATTERNS || used + len + 1 > sizeof(g_pattern_buf)) {
			log_message("ALLOCINFO_WRAPPERS: more than %zu patterns; '%.*s' and the "
				    "rest are ignored", g_nr_patterns, (int)(len > 64 ? 64 : len),
				    start);
			break;
		}
		memcpy(g_pattern_buf + used, start, len);
		g_pattern_buf[used + len] = '\0';
		g_patterns[g_nr_patterns++] = g_pattern_buf + used;
		used += len + 1;
	}
	if (!g_nr_patterns)
		return;
	busy_guard guard;
	g_objects = new std::vector<object_ranges>();
	g_ids = new std::unordered_map<std::string, uint32_t>();
	g_names[0] = "";
}

bool wrappers_declared()
{
	return g_nr_patterns != 0;
}

uint32_t wrapper_at(uintptr_t pc)
{
	if (!g_nr_patterns)
		return 0;
	pthread_mutex_lock(&g_lock);
	object_ranges *o = object_of(pc);
	uint32_t id = o ? lookup(*o, pc) : 0;
	pthread_mutex_unlock(&g_lock);
	if (o)
		return id;

	/* First sight of this object: read its symbols, outside every lock. */
	busy_guard guard;
	object_info oi;
	if (!describe_object(pc, oi))
		return 0;
	std::vector<symbol_hit> hits;
	scan_file(oi.path, oi.l_addr, hits);
	pthread_mutex_lock(&g_lock);
	if (!(o = object_of(pc))) {
		object_ranges fresh;
		fresh.lo = oi.lo;
		fresh.hi = oi.hi;
		for (const symbol_hit &h : hits) {
			uint32_t hid = id_for(h.name.c_str());
			if (hid)
				fresh.ranges.push_back({ h.start, h.end, hid });
		}
		std::sort(fresh.ranges.begin(), fresh.ranges.end(),
			  [](const range &a, const range &b) { return a.start < b.start; });
		g_objects->push_back(std::move(fresh));
		o = &g_objects->back();
	}
	id = lookup(*o, pc);
	pthread_mutex_unlock(&g_lock);
	return id;
}

uint32_t wrapper_named(const char *func)
{
	if (!g_nr_patterns || !func || !matches(func))
		return 0;
	busy_guard guard;
	pthread_mutex_lock(&g_lock);
	uint32_t id = id_for(func);
	pthread_mutex_unlock(&g_lock);
	return id;
}

const char *wrapper_name(uint32_t id)
{
	if (id == 0 || id > WRAPPER_MAX_IDS)
		return "";
	return __atomic_load_n(&g_names[id], __ATOMIC_ACQUIRE) ?: "";
}

void wrappers_forget(uintptr_t lo, uintptr_t hi)
{
	if (!g_nr_patterns)
		return;
	busy_guard guard;
	pthread_mutex_lock(&g_lock);
	auto &v = *g_objects;
	v.erase(std::remove_if(v.begin(), v.end(),
			       [lo, hi](const object_ranges &o) { return o.lo >= lo && o.hi <= hi; }),
		v.end());
	pthread_mutex_unlock(&g_lock);
}

} /* namespace allocinfo */
