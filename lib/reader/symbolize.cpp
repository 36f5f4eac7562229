/* SPDX-License-Identifier: MIT */
/*
 * The symbolizer behind dynamic (caller-address) tags: libdwfl in offline mode, one
 * Dwfl per file, with bounded caches of open files and of answers. See symbolize.h.
 */
#include "symbolize.h"

#include "cxxname.h"
#include "line_table.h"

#include <algorithm>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "safe_open.h"

namespace allocinfo {

namespace {

/* Enough for the objects of one process; past either bound everything is dropped,
 * which only costs re-reading. */
constexpr size_t max_modules = 64;
constexpr size_t max_results = 65536;

/* Reporting the ELF ourselves (an open descriptor), libdwfl never has to look for one. */
int find_elf_none(Dwfl_Module *, void **, const char *, Dwarf_Addr, char **, Elf **)
{
	return -1;
}

const char DEBUG_ROOT[] = "/usr/lib/debug";

/* Whether the separate debug file open at fd belongs to mod: the same build-id
 * when mod has one, else the CRC that its .gnu_debuglink gives. */
bool debug_file_matches(Dwfl_Module *mod, int fd, GElf_Word crc, bool have_crc)
{
	const unsigned char *want = nullptr;
	GElf_Addr vaddr;
	int want_len = dwfl_module_build_id(mod, &want, &vaddr);
	if (want_len > 0) {
		Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
		if (!elf)
			return false;
		const void *id = nullptr;
		ssize_t len = dwelf_elf_gnu_build_id(elf, &id);
		bool same = len == want_len && memcmp(id, want, (size_t)len) == 0;
		elf_end(elf);
		return same;
	}
	if (!have_crc)
		return false;
	uLong sum = crc32(0, Z_NULL, 0);
	unsigned char buf[65536];
	off_t off = 0;
	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf), off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return false;
		if (n == 0)
			break;
		sum = crc32(sum, buf, (uInt)n);
		off += n;
	}
	return (GElf_Word)sum == crc;
}

/* Tries one candidate path for mod's separate debug file; its descriptor or -1. */
int try_debug_file(Dwfl_Module *mod, const std::string &path, GElf_Word crc, bool have_crc,
		   char **found)
{
	struct stat st;
	int fd = open_regular(path.c_str(), &st);
	if (fd < 0)
		return -1;
	if (!debug_file_matches(mod, fd, crc, have_crc)) {
		close(fd);
		return -1;
	}
	*found = strdup(path.c_str());
	if (!*found) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * libdwfl's standard search for a separate debug file (build-id under
 * /usr/lib/debug/.build-id, then the .gnu_debuglink name next to the object, in its
 * .debug directory and under /usr/lib/debug), with every file opened the way of
 * safe_open.h: a store names the object, so the object's owner chooses these paths,
 * and dwfl_standard_find_debuginfo would open a FIFO there and wait forever. Skipped
 * entirely when debuginfod is configured: a lookup must not wait on the network.
 */
int find_debuginfo_safe(Dwfl_Module *mod, void **, const char *, Dwarf_Addr,
			const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			char **debuginfo_file_name)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (urls && *urls)
		return -1;
	*debuginfo_file_name = nullptr;

	const unsigned char *id = nullptr;
	GElf_Addr vaddr;
	int id_len = dwfl_module_build_id(mod, &id, &vaddr);
	if (id_len > 1 && id_len <= 64) {
		static const char hex[] = "0123456789abcdef";
		std::string path = std::string(DEBUG_ROOT) + "/.build-id/";
		for (int i = 0; i < id_len; i++) {
			path += hex[id[i] >> 4];
			path += hex[id[i] & 15];
			if (i == 0)
				path += '/';
		}
		path += ".debug";
		int fd = try_debug_file(mod, path, debuglink_crc, false, debuginfo_file_name);
		if (fd >= 0)
			return fd;
	}

	if (!debuglink_file || !*debuglink_file || !file_name || !*file_name)
		return -1;
	std::string link = debuglink_file;
	std::vector<std::string> candidates;
	if (link[0] == '/') {
		candidates.push_back(link);
	} else {
		std::string file = file_name;
		size_t slash = file.rfind('/');
		std::string dir = slash == std::string::npos ? "." : file.substr(0, slash);
		std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
		if (link != base)	/* the object itself is not its own debug file */
			candidates.push_back(dir + "/" + link);
		candidates.push_back(dir + "/.debug/" + link);
		if (dir[0] == '/')
			candidates.push_back(std::string(DEBUG_ROOT) + dir + "/" + link);
	}
	for (const std::string &c : candidates) {
		int fd = try_debug_file(mod, c, debuglink_crc, true, debuginfo_file_name);
		if (fd >= 0)
			return fd;
	}
	return -1;
}

char *debuginfo_path = nullptr; /* null: the default search path */

const Dwfl_Callbacks offline_callbacks = {
	find_elf_none,
	find_debuginfo_safe,
	dwfl_offline_section_address,
	&debuginfo_path,
};

/* The object at path, open at fd (which libdwfl owns from now on, or which is
 * closed here). Base 0 and no p_vaddr added: module addresses are link-time vaddrs
 * (up to the bias that lookups add back, non-zero only when the first PT_LOAD is
 * not at 0). */
Dwfl *open_module(const char *path, int fd, Dwfl_Module **modp)
{
	*modp = nullptr;
	Dwfl *dwfl = dwfl_begin(&offline_callbacks);
	if (!dwfl) {
		close(fd);
		return nullptr;
	}
	dwfl_report_begin(dwfl);
	Dwfl_Module *mod = dwfl_report_elf(dwfl, path, path, fd, 0, false);
	if (!mod)
		close(fd);	/* not taken when the report fails */
	if (dwfl_report_end(dwfl, nullptr, nullptr) != 0 || !mod) {
		dwfl_end(dwfl);
		return nullptr;
	}
	*modp = mod;
	return dwfl;
}

bool is_function_scope(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
}

int next_function_scope(Dwarf_Die *scopes, int n, int from)
{
	for (int i = from; i < n; ++i)
		if (is_function_scope(&scopes[i]))
			return i;
	return -1;
}

/* Clang records "/usr/bin/../lib/gcc/x86_64-linux-gnu/12/../../../../include/...":
 * the path is checked with "." and ".." resolved lexically. */
bool is_system_header(const std::string &file)
{
	if (file.empty() || file[0] != '/')
		return false;
	std::vector<std::string> parts;
	size_t i = 0;
	while (i < file.size()) {
		size_t j = file.find('/', i);
		if (j == std::string::npos)
			j = file.size();
		std::string part = file.substr(i, j - i);
		if (part == "..") {
			if (!parts.empty())
				parts.pop_back();
		} else if (!part.empty() && part != ".") {
			parts.push_back(part);
		}
		i = j + 1;
	}
	return parts.size() > 2 && parts[0] == "usr" && parts[1] == "include";
}

bool is_cxx(Dwarf_Die *cu)
{
	int lang = dwarf_srclang(cu);
	return lang == DW_LANG_C_plus_plus || lang == DW_LANG_C_plus_plus_03 ||
	       lang == DW_LANG_C_plus_plus_11 || lang == DW_LANG_C_plus_plus_14;
}

/* The DIE that carries DW_AT_name for a (possibly inlined or out-of-line) function,
 * following abstract origins and specifications a bounded number of times. */
bool find_named_die(Dwarf_Die *die, Dwarf_Die *named)
{
	Dwarf_Die cur = *die;
	for (int hop = 0; hop < 8; ++hop) {
		if (dwarf_hasattr(&cur, DW_AT_name)) {
			*named = cur;
			return true;
		}
		Dwarf_Attribute attr;
		Dwarf_Attribute *ref = dwarf_attr(&cur, DW_AT_abstract_origin, &attr);
		if (!ref)
			ref = dwarf_attr(&cur, DW_AT_specification, &attr);
		Dwarf_Die next;
		if (!ref || !dwarf_formref_die(ref, &next))
			return false;
		cur = next;
	}
	return false;
}

const char *linkage_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	return name && *name ? name : nullptr;
}

/* Calls visit(child, parent) for each child of root, and for each child of every
 * DIE visit() returned true for: a walk of the part of a unit it asks for. */
template <typename Visit> void walk_dies(Dwarf_Die *root, Visit visit)
{
	std::vector<Dwarf_Die> pending(1, *root);
	while (!pending.empty()) {
		Dwarf_Die parent = pending.back();
		pending.pop_back();
		Dwarf_Die child;
		if (dwarf_child(&parent, &child) != 0)
			continue;
		do {
			if (visit(child, parent))
				pending.push_back(child);
		} while (dwarf_siblingof(&child, &child) == 0);
	}
}

/* Calls fn(lo, hi) for each nonempty address range of die, at most 4,096. */
template <typename Fn> void for_each_range(Dwarf_Die *die, Fn fn)
{
	ptrdiff_t it = 0;
	Dwarf_Addr base = 0, lo = 0, hi = 0;
	for (int k = 0; k < 4096 && (it = dwarf_ranges(die, it, &base, &lo, &hi)) > 0; ++k)
		if (lo < hi)
			fn(lo, hi);
}

/*
 * The enclosing DIE of each namespace, class, function and block of a unit, found in
 * one walk of the unit on first use. dwarf_getscopes_die() walks the unit from its
 * root for every DIE it is asked about: naming the 1,100 lines of a C++ test program
 * of large units (yaml-cpp's), constructors among them, which are named through their
 * scopes, spent 78% of its 9 s there.
 */
class scope_index {
public:
	/* die and the DIEs enclosing it, innermost first, its unit last: what
	 * dwarf_getscopes_die() gives. */
	void chain(Dwarf_Die *die, std::vector<Dwarf_Die> &out)
	{
		out.clear();
		Dwarf_Die unit;
		if (dwarf_diecu(die, &unit, nullptr, nullptr)) {
			/* By unit, not by offset: a type unit's offsets (.debug_types)
			 * may equal a compilation unit's. */
			unit_scopes &u = units_[unit.cu];
			if (!u.indexed)
				index(&unit, u);
			const link *l = u.find(dwarf_dieoffset(die));
			if (l) {
				/* Bounded: a hostile file's sibling links could make a loop. */
				out.push_back(*die);
				Dwarf_Die parent;
				for (; l && out.size() < 1024 && die_at(unit, l->parent, &parent);
				     l = u.find(l->parent))
					out.push_back(parent);
				return;
			}
		}
		/* Not below the scopes indexed (an enumerator, say): the long way. */
		Dwarf_Die *scopes = nullptr;
		int n = dwarf_getscopes_die(die, &scopes);
		if (n > 0)
			out.assign(scopes, scopes + n);
		free(scopes);
	}

private:
	/* A scope's DIE offset and its parent's: 16 bytes, where a hash map of DIEs took
	 * about 80 (8 MB for yaml-cpp's test program). */
	struct link {
		Dwarf_Off die, parent;
	};
	struct unit_scopes {
		bool indexed = false;
		std::vector<link> links;	/* sorted by die */

		const link *find(Dwarf_Off off) const
		{
			auto it = std::lower_bound(links.begin(), links.end(), off,
						   [](const link &l, Dwarf_Off v) { return l.die < v; });
			return it != links.end() && it->die == off ? &*it : nullptr;
		}
	};

	static bool is_scope(int tag)
	{
		return tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
		       tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
		       tag == DW_TAG_subprogram || tag == DW_TAG_lexical_block;
	}

	/* The DIE at off in unit's section: .debug_info, or .debug_types for a type
	 * unit of DWARF 4. */
	static bool die_at(const Dwarf_Die &unit, Dwarf_Off off, Dwarf_Die *out)
	{
		Dwarf *dw = dwarf_cu_getdwarf(unit.cu);
		return (dwarf_offdie(dw, off, out) && out->cu == unit.cu) ||
		       (dwarf_offdie_types(dw, off, out) && out->cu == unit.cu);
	}

	static void index(Dwarf_Die *unit, unit_scopes &u)
	{
		u.indexed = true;
		walk_dies(unit, [&u](Dwarf_Die &child, Dwarf_Die &parent) {
			if (!is_scope(dwarf_tag(&child)))
				return false;
			u.links.push_back({dwarf_dieoffset(&child), dwarf_dieoffset(&parent)});
			return true;
		});
		std::sort(u.links.begin(), u.links.end(),
			  [](const link &a, const link &b) { return a.die < b.die; });
		u.links.shrink_to_fit();
	}

	std::unordered_map<const Dwarf_CU *, unit_scopes> units_;
};

/*
 * "ns::Foo::Foo" for a C++ function known only by DW_AT_name (constructors, for
 * one, have no single linkage name): the enclosing namespaces and classes, and an
 * enclosing function (of lambdas, local classes) qualified the same way, depth
 * bounded.
 */
std::string qualified_name(scope_index &scopes_of, Dwarf_Die *named, int depth = 0)
{
	const char *name = dwarf_diename(named);
	if (!name)
		return std::string();
	std::string prefix;
	std::vector<Dwarf_Die> scopes;
	scopes_of.chain(named, scopes);
	for (size_t i = 1; i < scopes.size(); ++i) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_subprogram) {
			const char *outer = linkage_name(&scopes[i]);
			std::string o;
			Dwarf_Die outer_named;
			if (outer)
				o = demangled_function_name(outer);
			else if (depth < 8 && find_named_die(&scopes[i], &outer_named))
				o = cxx_function_name(
					qualified_name(scopes_of, &outer_named, depth + 1).c_str());
			if (!o.empty())
				prefix = o + "::" + prefix;
			break;
		}
		if (tag != DW_TAG_namespace && tag != DW_TAG_class_type &&
		    tag != DW_TAG_structure_type && tag != DW_TAG_union_type)
			break;
		const char *part = dwarf_diename(&scopes[i]);
		if (!part)
			part = tag == DW_TAG_namespace ? "(anonymous namespace)" : "(anonymous class)";
		prefix = std::string(part) + "::" + prefix;
	}
	return prefix + name;
}

/* The short and the full name of a function scope (cxxname.h); empty if none. */
void scope_names(scope_index &scopes_of, Dwarf_Die *cu, Dwarf_Die *die, std::string &func,
		 std::string &full)
{
	const char *linkage = linkage_name(die);
	if (linkage) {
		func = demangled_function_name(linkage);
		full = demangled_full_name(linkage);
		return;
	}
	Dwarf_Die named;
	if (!find_named_die(die, &named))
		return;
	std::string name = is_cxx(cu) ? qualified_name(scopes_of, &named) : dwarf_diename(&named);
	func = cxx_function_name(name.c_str());
	full = cxx_full_name(name.c_str());
}

/*
 * While out.file is a system header and *func was inlined, moves out to the call
 * site and to the function holding it, which becomes *func. dwarf_getscopes goes on
 * from an inlined subroutine to its abstract origin's scopes, so the callers come
 * from the concrete parent chain (dwarf_getscopes_die) instead. scope_index does not
 * serve here: indexing every inlined call of a unit cost yaml-cpp's report 25 MB
 * and 0.1 s more than these walks.
 */
void skip_system_headers(Dwarf_Die *cu, const line_table *lines, Dwarf_Die *func,
			 source_location &out)
{
	if (!is_system_header(out.file) || dwarf_tag(func) != DW_TAG_inlined_subroutine)
		return;
	Dwarf_Files *files = nullptr;
	size_t nfiles = 0;
	if (lines)
		nfiles = lines->files();
	else if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0)
		return;
	Dwarf_Die *chain = nullptr;
	int n = dwarf_getscopes_die(func, &chain);
	int i = 0;
	while (i < n && is_system_header(out.file) &&
	       dwarf_tag(&chain[i]) == DW_TAG_inlined_subroutine) {
		Dwarf_Attribute attr;
		Dwarf_Word file_idx = 0, line = 0;
		if (dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_file, &attr), &file_idx) != 0 ||
		    dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_line, &attr), &line) != 0 ||
		    line == 0 || line > UINT_MAX || file_idx >= nfiles)
			break;
		const char *file = lines ? lines->file_name(file_idx)
					 : dwarf_filesrc(files, file_idx, nullptr, nullptr);
		int outer = next_function_scope(chain, n, i + 1);
		if (!file || !*file || outer < 0)
			break;
		out.file = file;
		out.line = static_cast<unsigned>(line);
		i = outer;
	}
	if (i > 0 && i < n)
		*func = chain[i];
	free(chain);
}

/*
 * A path as the compiler was given it: libdw joins a relative name with the
 * compilation directory (DW_AT_comp_dir), which __FILE__ in a tagged call does
 * not, so that prefix goes ("/home/me/src/hold.cpp" compiled in /home/me/src as
 * "hold.cpp" is "hold.cpp", as its tagged calls show it). A file given by an
 * absolute path stays so: its directory is in the line table's directories as it
 * is (entries after the first, which is the compilation directory).
 */
std::string relative_to_comp_dir(Dwarf_Die *cu, const line_table *lines, const std::string &file)
{
	Dwarf_Attribute attr;
	const char *dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
	if (!dir || dir[0] != '/')
		return file;
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (file.size() <= n + 1 || file.compare(0, n, dir, n) != 0 || file[n] != '/')
		return file;
	std::string parent = file.substr(0, file.rfind('/'));
	if (lines) {
		for (size_t i = 1; i < lines->dirs(); i++)
			if (lines->dir(i) && parent == lines->dir(i))
				return file;	/* given as an absolute path */
		return file.substr(n + 1);
	}
	Dwarf_Files *files = nullptr;
	size_t nfiles = 0, ndirs = 0;
	const char *const *dirs = nullptr;
	if (dwarf_getsrcfiles(cu, &files, &nfiles) == 0 &&
	    dwarf_getsrcdirs(files, &dirs, &ndirs) == 0) {
		for (size_t i = 1; i < ndirs; i++)
			if (dirs[i] && parent == dirs[i])
				return file;	/* given as an absolute path */
	}
	return file.substr(n + 1);
}

/* The address ranges of one compilation unit, in DWARF addresses. */
struct cu_range {
	Dwarf_Addr lo, hi;
	Dwarf_Die cu;
};

/* The inlined calls and lexical blocks directly under one scope, by address, with
 * their DIE order (the first in it wins where ranges overlap): see innermost_inline(). */
struct scope_children {
	struct entry {
		Dwarf_Addr lo, hi;
		Dwarf_Die die;
		uint32_t order;
		bool inlined;	/* DW_TAG_inlined_subroutine, else a lexical block */
	};
	std::vector<entry> by_lo;	/* sorted by lo */
	std::vector<Dwarf_Addr> max_hi;	/* the largest hi of by_lo[0..i] */
};

/* One opened file; mod is null when it could not be read as ELF, which is
 * remembered too so that bad files are not re-read on every lookup. */
struct open_file {
	dev_t dev = 0;
	ino_t ino = 0;
	off_t size = 0;
	struct timespec mtime = {};
	Dwfl *dwfl = nullptr;
	Dwfl_Module *mod = nullptr;
	uint64_t gen = 0; /* distinct per opening: keys the results */
	bool cus_indexed = false;
	std::vector<cu_range> cus; /* sorted by lo */
	/* The scopes enclosing each name, by unit, made once: see qualified_name(). */
	scope_index scopes;
	/* The functions of each CU (by its DIE offset), made once: see function_at(). */
	std::unordered_map<Dwarf_Off, std::vector<cu_range>> functions;
	/* The children of each scope a lookup went through (by its DIE offset). */
	std::unordered_map<Dwarf_Off, scope_children> children;
	/* The line tables of the units looked up, by .debug_line offset; null where
	 * libdw's is used (line_table.h). */
	bool sections_found = false;
	line_sections sections;
	std::unordered_map<Dwarf_Off, std::unique_ptr<line_table>> lines;
	size_t lines_memory = 0;
	/* The ELF symbols that name code, sorted by address: see symbol_at(). */
	bool symbols_indexed = false;
	struct symbol {
		Dwarf_Addr addr, end;	/* end: of its size, or of its section if sizeless */
		const char *name;
		bool global, sized;
	};
	std::vector<symbol> symbols;
};

/*
 * The ranges of the subprograms of a CU that hold code, found once per CU: those at
 * its top level and inside namespaces and classes. dwarf_getscopes() walks the
 * whole CU for every address, which for a CU of many functions makes each lookup
 * as slow as the CU is large.
 */
void index_functions(Dwarf_Die *cu, std::vector<cu_range> &out)
{
	walk_dies(cu, [&out](Dwarf_Die &child, Dwarf_Die &) {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_subprogram) {
			for_each_range(&child, [&](Dwarf_Addr lo, Dwarf_Addr hi) {
				out.push_back({lo, hi, child});
			});
			return true;	/* nested functions (GNU C) */
		}
		return tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
		       tag == DW_TAG_structure_type || tag == DW_TAG_union_type;
	});
	std::sort(out.begin(), out.end(),
		  [](const cu_range &a, const cu_range &b) { return a.lo < b.lo; });
}

/* scope's inlined calls and blocks with their ranges, made on first use: a function
 * of many inlined calls (a test body) had them all read again for every address. */
const scope_children &children_of(open_file &f, Dwarf_Die *scope)
{
	auto made = f.children.try_emplace(dwarf_dieoffset(scope));
	scope_children &c = made.first->second;
	if (!made.second)
		return c;
	uint32_t order = 0;
	walk_dies(scope, [&c, &order](Dwarf_Die &child, Dwarf_Die &) {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block) {
			for_each_range(&child, [&](Dwarf_Addr lo, Dwarf_Addr hi) {
				c.by_lo.push_back({lo, hi, child, order, tag == DW_TAG_inlined_subroutine});
			});
			order++;
		}
		return false;	/* its children only */
	});
	std::sort(c.by_lo.begin(), c.by_lo.end(),
		  [](const scope_children::entry &a, const scope_children::entry &b) {
			  return a.lo < b.lo;
		  });
	c.max_hi.reserve(c.by_lo.size());
	for (const scope_children::entry &e : c.by_lo)
		c.max_hi.push_back(c.max_hi.empty() ? e.hi : std::max(c.max_hi.back(), e.hi));
	return c;
}

/* The first child (in DIE order) of a scope whose ranges hold pc, or null. */
const scope_children::entry *child_at(const scope_children &c, Dwarf_Addr pc)
{
	auto it = std::upper_bound(c.by_lo.begin(), c.by_lo.end(), pc,
				   [](Dwarf_Addr v, const scope_children::entry &e) { return v < e.lo; });
	const scope_children::entry *first = nullptr;
	/* Back from the last range starting at or below pc, while one so far may reach
	 * past it. */
	for (size_t i = (size_t)(it - c.by_lo.begin()); i > 0 && c.max_hi[i - 1] > pc; i--) {
		const scope_children::entry &e = c.by_lo[i - 1];
		if (pc < e.hi && (!first || e.order < first->order))
			first = &e;
	}
	return first;
}

/* The innermost inlined subroutine under fn that covers pc (through lexical
 * blocks), else fn itself. */
Dwarf_Die innermost_inline(open_file &f, Dwarf_Die fn, Dwarf_Addr pc)
{
	Dwarf_Die func = fn, cur = fn;
	for (int depth = 0; depth < 64; depth++) {
		const scope_children::entry *c = child_at(children_of(f, &cur), pc);
		if (!c)
			break;
		if (c->inlined)
			func = c->die;
		cur = c->die;
	}
	return func;
}

/*
 * The innermost function scope (subprogram or inlined subroutine) covering pc in
 * cu, through the CU's function index: what the first function scope of
 * dwarf_getscopes() is, at the cost of a binary search and of the one function.
 */
bool function_at(open_file &f, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *out)
{
	std::vector<cu_range> &fns = f.functions[dwarf_dieoffset(cu)];
	if (fns.empty())
		index_functions(cu, fns);
	auto it = std::upper_bound(fns.begin(), fns.end(), pc,
				   [](Dwarf_Addr v, const cu_range &r) { return v < r.lo; });
	/* Ranges may nest (a function's cold part): look back a little. */
	for (int back = 0; it != fns.begin() && back < 16; back++) {
		--it;
		if (pc < it->hi) {
			*out = innermost_inline(f, it->cu, pc);
			return true;
		}
	}
	return false;
}

/*
 * The ELF symbol naming the code at addr (a module address), through an index of
 * the symbol table made once: libdwfl's dwfl_module_addrname() reads every symbol
 * for every address. As it does: the symbol that contains addr, else the closest
 * sizeless one below it; among symbols at one address, a global one.
 */
const char *symbol_at(open_file &f, Dwarf_Addr addr)
{
	if (!f.symbols_indexed) {
		f.symbols_indexed = true;
		GElf_Addr bias = 0;
		Elf *elf = dwfl_module_getelf(f.mod, &bias);
		int n = elf ? dwfl_module_getsymtab(f.mod) : 0;
		for (int i = 1; i < n; i++) {
			GElf_Sym sym;
			GElf_Addr value;
			GElf_Word shndx;
			const char *name = dwfl_module_getsym_info(f.mod, i, &sym, &value, &shndx,
								   nullptr, nullptr);
			int type = GELF_ST_TYPE(sym.st_info);
			if (!name || !*name || sym.st_shndx == SHN_UNDEF ||
			    (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE))
				continue;
			Dwarf_Addr end = value + sym.st_size;
			if (!sym.st_size) {
				/* Sizeless: it may stand for what follows, in its section. */
				GElf_Shdr shdr;
				Elf_Scn *scn = elf_getscn(elf, shndx);
				if (!scn || !gelf_getshdr(scn, &shdr))
					continue;
				end = shdr.sh_addr + bias + shdr.sh_size;
			}
			f.symbols.push_back({value, end, name,
					     GELF_ST_BIND(sym.st_info) == STB_GLOBAL,
					     sym.st_size != 0});
		}
		std::stable_sort(f.symbols.begin(), f.symbols.end(),
				 [](const open_file::symbol &a, const open_file::symbol &b) {
					 return a.addr < b.addr;
				 });
	}
	auto it = std::upper_bound(f.symbols.begin(), f.symbols.end(), addr,
				   [](Dwarf_Addr v, const open_file::symbol &s) { return v < s.addr; });
	const open_file::symbol *best = nullptr;
	for (int back = 0; it != f.symbols.begin() && back < 64; back++) {
		--it;
		if (addr >= it->end)
			continue;
		if (best && best->addr != it->addr)
			break;	/* the closest address wins */
		if (!best || (it->global && !best->global) || (it->sized && !best->sized))
			best = &*it;
	}
	return best ? best->name : nullptr;
}

/*
 * libdwfl (0.188) finds an address's CU through .debug_aranges only, which Clang
 * does not emit by default. Without it, the CUs' own ranges are indexed once.
 */
Dwarf_Die *find_cu(open_file &f, Dwarf_Addr addr, Dwarf_Addr *dwbias, Dwarf_Die *mem)
{
	Dwarf *dw = dwfl_module_getdwarf(f.mod, dwbias);
	if (!dw)
		return nullptr;
	if (!f.cus_indexed) {
		f.cus_indexed = true;
		Dwarf_CU *cu = nullptr;
		Dwarf_Die cudie;
		uint8_t unit_type = 0;
		while (dwarf_get_units(dw, cu, &cu, nullptr, &unit_type, &cudie, nullptr) == 0) {
			if (unit_type != DW_UT_compile && unit_type != DW_UT_skeleton &&
			    unit_type != DW_UT_partial)
				continue;
			ptrdiff_t it = 0;
			Dwarf_Addr base = 0, lo = 0, hi = 0;
			/* Capped: corrupt range lists must not keep us here. */
			for (int k = 0; k < 65536 && (it = dwarf_ranges(&cudie, it, &base, &lo, &hi)) > 0; ++k)
				if (lo < hi)
					f.cus.push_back({lo, hi, cudie});
		}
		std::sort(f.cus.begin(), f.cus.end(),
			  [](const cu_range &a, const cu_range &b) { return a.lo < b.lo; });
	}
	Dwarf_Addr pc = addr - *dwbias;
	auto it = std::upper_bound(f.cus.begin(), f.cus.end(), pc,
				   [](Dwarf_Addr v, const cu_range &r) { return v < r.lo; });
	if (it == f.cus.begin() || pc >= (it - 1)->hi)
		return nullptr;
	*mem = (it - 1)->cu;
	return mem;
}

/* Bounds what one file's line tables hold; past it they are all dropped, which only
 * costs reading them again. */
constexpr size_t lines_budget = 32u << 20;

/*
 * cu's line table as line_table.h reads it, or null where libdw's is used: a split
 * unit (libdw takes its skeleton's), a unit of another Dwarf than the module's (a
 * supplementary file), a table the reader refuses.
 */
const line_table *lines_of(open_file &f, Dwarf_Die *cu)
{
	Dwarf_Attribute attr;
	Dwarf_Word offset = 0;
	Dwarf_Half version = 0;
	uint8_t unit_type = 0, address_size = 0;
	Dwarf_Addr dwbias;
	Dwarf *dw = dwfl_module_getdwarf(f.mod, &dwbias);
	if (!dw || dwarf_cu_getdwarf(cu->cu) != dw ||
	    dwarf_cu_info(cu->cu, &version, &unit_type, nullptr, nullptr, nullptr, &address_size,
			  nullptr) != 0 ||
	    unit_type == DW_UT_split_compile || unit_type == DW_UT_split_type ||
	    dwarf_formudata(dwarf_attr(cu, DW_AT_stmt_list, &attr), &offset) != 0)
		return nullptr;
	auto it = f.lines.find(offset);
	if (it != f.lines.end())
		return it->second.get();
	if (!f.sections_found) {
		f.sections = line_sections_of(dw);
		f.sections_found = true;
	}
	if (f.lines_memory > lines_budget) {
		f.lines.clear();
		f.lines_memory = 0;
	}
	std::unique_ptr<line_table> t(new line_table);
	const char *comp_dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
	if (!t->read(f.sections, offset, address_size, comp_dir))
		t.reset();
	else
		f.lines_memory += t->memory();
	return f.lines.emplace(offset, std::move(t)).first->second.get();
}

/* Fills what can be found for vaddr in mod; true when file:line were found. */
bool resolve(open_file &f, uint64_t vaddr, bool is_return_address, source_location &out)
{
	Dwfl_Module *mod = f.mod;
	GElf_Addr bias = 0;
	if (!dwfl_module_getelf(mod, &bias))
		return false;
	Dwarf_Addr lo = 0, hi = 0;
	if (!dwfl_module_info(mod, nullptr, &lo, &hi, nullptr, nullptr, nullptr, nullptr))
		return false;
	uint64_t v = is_return_address && vaddr > 0 ? vaddr - 1 : vaddr;
	Dwarf_Addr addr = v + bias;
	if (addr < lo || addr >= hi)
		return false;

	Dwarf_Addr dwbias = 0;
	Dwarf_Die cu_mem;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, &dwbias);
	if (!cu)
		cu = find_cu(f, addr, &dwbias, &cu_mem);

	bool found = false;
	int lineno = 0;
	const char *src = nullptr;
	const line_table *lines = cu ? lines_of(f, cu) : nullptr;
	Dwfl_Line *line = nullptr;
	uint32_t file_index = 0;
	if (lines) {
		if (lines->find(addr - dwbias, &file_index, &lineno))
			src = lines->file_name(file_index);
	} else if ((line = dwfl_module_getsrc(mod, addr))) {
		src = dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr);
	} else if (cu) {
		Dwarf_Line *l = dwarf_getsrc_die(cu, addr - dwbias);
		if (l && dwarf_lineno(l, &lineno) == 0)
			src = dwarf_linesrc(l, nullptr, nullptr);
	}
	if (src && *src && lineno > 0) {
		out.file = src;
		out.line = static_cast<unsigned>(lineno);
		found = true;
	}

	std::string func, full;
	if (cu) {
		Dwarf_Die die;
		if (function_at(f, cu, addr - dwbias, &die)) {
			if (found)
				skip_system_headers(cu, lines, &die, out);
			scope_names(f.scopes, cu, &die, func, full);
		}
	}
	if (func.empty()) {
		const char *sym = symbol_at(f, addr);
		if (sym && *sym) {
			func = demangled_function_name(sym);
			full = demangled_full_name(sym);
		}
	}
	if (!func.empty()) {
		out.func = func;
		out.full_func = full.empty() ? func : full;
	}
	if (found && cu)
		out.file = relative_to_comp_dir(cu, lines, out.file);
	return found;
}

} /* namespace */

struct symbolizer::state {
	struct key {
		uint64_t gen;
		uint64_t vaddr;
		bool ret;
		bool operator==(const key &o) const
		{
			return gen == o.gen && vaddr == o.vaddr && ret == o.ret;
		}
	};
	struct key_hash {
		size_t operator()(const key &k) const
		{
			uint64_t h = k.vaddr * 0x9e3779b97f4a7c15ull;
			h ^= (k.gen << 1 | (k.ret ? 1 : 0)) + 0x632be59bd9b4e019ull + (h << 6) + (h >> 2);
			return static_cast<size_t>(h);
		}
	};
	struct answer {
		source_location loc;
		bool found;
	};

	std::mutex lock;
	std::unordered_map<std::string, open_file> modules;
	/* owner_may_read() answers, by path, file identity and owner. */
	std::unordered_map<std::string, bool> access;
	std::unordered_map<key, answer, key_hash> results;
	uint64_t next_gen = 1;
	/* The on-disk cache: "dev ino size mtime.ns vaddr ret" -> answer. */
	std::unordered_map<std::string, answer> persistent;
	bool persistent_on = false;	/* load_cache() was called */
	bool persistent_dirty = false;

	static std::string persistent_key(const struct stat &sb, uint64_t vaddr, bool ret)
	{
		char k[160];
		snprintf(k, sizeof(k), "%llu %llu %lld %lld.%09ld %" PRIx64 " %d",
			 (unsigned long long)sb.st_dev, (unsigned long long)sb.st_ino,
			 (long long)sb.st_size, (long long)sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec,
			 vaddr, ret ? 1 : 0);
		return k;
	}

	~state() { drop_all(); }

	void drop_all()
	{
		for (auto &m : modules)
			if (m.second.dwfl)
				dwfl_end(m.second.dwfl);
		modules.clear();
		results.clear();
		access.clear();
	}

	/* owner_may_read(), remembered (with the lock held). */
	bool may_read(const store_owner &who, const std::string &path, const struct stat &sb)
	{
		std::string k = persistent_key(sb, 0, false) + " " + who.key + " " + path;
		auto it = access.find(k);
		if (it != access.end())
			return it->second;
		if (access.size() >= max_results)
			access.clear();
		bool ok = owner_may_read(who, path, sb);
		access.emplace(k, ok);
		return ok;
	}

	/* Whether who may read the separate debug file that libdwfl loaded for m, if
	 * any (with the lock held). */
	bool may_read_debug_file(const store_owner &who, open_file &m)
	{
		const char *main_file = nullptr, *debug_file = nullptr;
		dwfl_module_info(m.mod, nullptr, nullptr, nullptr, nullptr, nullptr, &main_file,
				 &debug_file);
		if (!debug_file || (main_file && strcmp(main_file, debug_file) == 0))
			return true;
		struct stat st;
		return stat(debug_file, &st) == 0 && may_read(who, debug_file, st);
	}

	static bool same_file(const open_file &m, const struct stat &sb)
	{
		return m.dev == sb.st_dev && m.ino == sb.st_ino && m.size == sb.st_size &&
		       m.mtime.tv_sec == sb.st_mtim.tv_sec && m.mtime.tv_nsec == sb.st_mtim.tv_nsec;
	}

	/* The object at path, open at fd (taken: kept or closed). */
	open_file &get(const std::string &path, const struct stat &sb, int fd)
	{
		auto it = modules.find(path);
		if (it != modules.end()) {
			if (same_file(it->second, sb)) {
				close(fd);
				return it->second;
			}
			/* Rebuilt: its old answers are keyed by the old gen and never hit. */
			if (it->second.dwfl)
				dwfl_end(it->second.dwfl);
			modules.erase(it);
		}
		if (modules.size() >= max_modules)
			drop_all();
		open_file m;
		m.dev = sb.st_dev;
		m.ino = sb.st_ino;
		m.size = sb.st_size;
		m.mtime = sb.st_mtim;
		m.gen = next_gen++;
		m.dwfl = open_module(path.c_str(), fd, &m.mod);
		return modules.emplace(path, std::move(m)).first->second;
	}
};

symbolizer::symbolizer() : st_(new state) {}

symbolizer::~symbolizer() = default;

bool symbolizer::lookup(const std::string &path, uint64_t vaddr, bool is_return_address,
			source_location &out, const store_owner *who)
{
	char hex[2 + 16 + 1];
	snprintf(hex, sizeof(hex), "0x%" PRIx64, vaddr);
	out.file = "??";
	out.line = 0;
	out.func = hex;
	out.full_func = hex;

	/* Only regular files, opened without blocking (safe_open.h). */
	struct stat sb;
	int fd = path.empty() ? -1 : open_regular(path.c_str(), &sb);
	if (fd < 0)
		return false;

	/* Answers for another user than ours are checked, and never kept on disk:
	 * the disk cache does not say which debug file an answer came from. */
	bool check = who && !who->is_root() && who->uid != geteuid();
	std::lock_guard<std::mutex> guard(st_->lock);
	if (check && !st_->may_read(*who, path, sb)) {
		close(fd);
		return false;
	}
	std::string pkey;
	if (st_->persistent_on && !check) {
		pkey = state::persistent_key(sb, vaddr, is_return_address);
		auto hit = st_->persistent.find(pkey);
		if (hit != st_->persistent.end()) {
			close(fd);
			out = hit->second.loc;
			return hit->second.found;
		}
	}
	open_file &m = st_->get(path, sb, fd);
	if (!m.mod)
		return false;
	state::key k = {m.gen, vaddr, is_return_address};
	auto it = st_->results.find(k);
	if (it != st_->results.end()) {
		if (check && !st_->may_read_debug_file(*who, m))
			return false;
		out = it->second.loc;
		return it->second.found;
	}
	state::answer a = {out, false};
	a.found = resolve(m, vaddr, is_return_address, a.loc);
	if (check && !st_->may_read_debug_file(*who, m)) {
		if (st_->results.size() >= max_results)
			st_->results.clear();
		st_->results.emplace(k, a);
		return false;
	}
	if (st_->results.size() >= max_results)
		st_->results.clear();
	st_->results.emplace(k, a);
	if (!pkey.empty() && st_->persistent.size() < max_results) {
		st_->persistent.emplace(pkey, a);
		st_->persistent_dirty = true;
	}
	out = a.loc;
	return a.found;
}

/* One entry a line: the key's six fields, then found, line, file, func and the full
 * name, separated by tabs (names never hold tabs or newlines: file and func are one
 * token each, and the full name has each run of whitespace made one blank). Lines
 * of another shape (an older format) are skipped. */
bool symbolizer::load_cache(const std::string &file)
{
	/* A regular file, opened without blocking, read up to a bound. */
	struct stat st;
	int fd = open_regular(file.c_str(), &st, true);
	if (fd >= 0 && st.st_size > (off_t)(64 << 20)) {	/* not one we wrote */
		close(fd);
		fd = -1;
	}
	FILE *f = fd >= 0 ? fdopen(fd, "r") : nullptr;
	if (fd >= 0 && !f)
		close(fd);
	std::lock_guard<std::mutex> guard(st_->lock);
	st_->persistent_on = true;	/* from now on, answers are remembered */
	if (!f)
		return false;
	char line[8192];
	while (fgets(line, sizeof(line), f) && st_->persistent.size() < max_results) {
		char *nl = strchr(line, '\n');
		if (!nl)
			continue;	/* too long: not ours */
		*nl = '\0';
		char *field[6];
		int n = 0;
		for (char *p = line; n < 6; n++) {
			field[n] = p;
			char *tab = strchr(p, '\t');
			if (!tab)
				break;
			*tab = '\0';
			p = tab + 1;
		}
		if (n != 5)
			continue;
		char *func = field[4], *full = field[5];
		if (strchr(full, '\t') || !func[0] || !full[0] || !field[3][0])
			continue;
		state::answer a;
		a.found = strcmp(field[1], "1") == 0;
		a.loc.line = (unsigned)strtoul(field[2], nullptr, 10);
		a.loc.file = field[3];
		a.loc.func = func;
		a.loc.full_func = full;
		st_->persistent.emplace(field[0], a);
	}
	fclose(f);
	if (st_->persistent.size() >= max_results) {
		/* Full of answers for files long gone, perhaps: start again. */
		st_->persistent.clear();
		st_->persistent_dirty = true;
	}
	return true;
}

bool symbolizer::save_cache(const std::string &file)
{
	std::lock_guard<std::mutex> guard(st_->lock);
	if (!st_->persistent_dirty)
		return true;
	/* A file of our own: never through a link someone left in its place. */
	std::string tmp = file + ".tmp";
	unlink(tmp.c_str());
	int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : nullptr;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	for (const auto &e : st_->persistent)
		fprintf(f, "%s\t%d\t%u\t%s\t%s\t%s\n", e.first.c_str(), e.second.found ? 1 : 0,
			e.second.loc.line, e.second.loc.file.c_str(), e.second.loc.func.c_str(),
			e.second.loc.full_func.c_str());
	bool ok = fflush(f) == 0 && !ferror(f);
	ok = fclose(f) == 0 && ok;
	if (!ok || rename(tmp.c_str(), file.c_str()) != 0) {
		unlink(tmp.c_str());
		return false;
	}
	st_->persistent_dirty = false;
	return true;
}

void symbolizer::clear()
{
	std::lock_guard<std::mutex> guard(st_->lock);
	st_->drop_all();
}

void symbolizer::remember_answers()
{
	std::lock_guard<std::mutex> guard(st_->lock);
	st_->persistent_on = true;
}

void symbolizer::release_files()
{
	std::lock_guard<std::mutex> guard(st_->lock);
	for (auto &m : st_->modules)
		if (m.second.dwfl)
			dwfl_end(m.second.dwfl);
	st_->modules.clear();
	st_->results.clear();	/* keyed by the openings just ended */
}

} /* namespace allocinfo */
