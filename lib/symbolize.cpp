/* SPDX-License-Identifier: MIT */
/*
 * The symbolizer behind dynamic (caller-address) tags: libdwfl in offline mode, one
 * Dwfl per file, with bounded caches of open files and of answers. See symbolize.h.
 */
#include "symbolize.h"

#include "cxxname.h"

#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <sys/stat.h>

namespace allocinfo {

namespace {

/* Enough for the objects of one process; past either bound everything is dropped,
 * which only costs re-reading. */
constexpr size_t max_modules = 64;
constexpr size_t max_results = 65536;

/* Reporting the ELF ourselves, libdwfl never has to look for one. */
int find_elf_none(Dwfl_Module *, void **, const char *, Dwarf_Addr, char **, Elf **)
{
	return -1;
}

/* The standard search, except that it is skipped entirely when debuginfod is
 * configured: a lookup must not wait on the network. */
int find_debuginfo_local(Dwfl_Module *mod, void **userdata, const char *modname,
			 Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			 GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (urls && *urls)
		return -1;
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					    debuglink_file, debuglink_crc, debuginfo_file_name);
}

char *debuginfo_path = nullptr; /* null: the default search path */

const Dwfl_Callbacks offline_callbacks = {
	find_elf_none,
	find_debuginfo_local,
	dwfl_offline_section_address,
	&debuginfo_path,
};

/* Base 0 and no p_vaddr added: module addresses are link-time vaddrs (up to the
 * bias that lookups add back, non-zero only when the first PT_LOAD is not at 0). */
Dwfl *open_module(const char *path, Dwfl_Module **modp)
{
	*modp = nullptr;
	Dwfl *dwfl = dwfl_begin(&offline_callbacks);
	if (!dwfl)
		return nullptr;
	dwfl_report_begin(dwfl);
	Dwfl_Module *mod = dwfl_report_elf(dwfl, path, path, -1, 0, false);
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

bool is_system_header(const std::string &file)
{
	return file.compare(0, 13, "/usr/include/") == 0;
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

/* "ns::Foo::Foo" for a C++ function known only by DW_AT_name (constructors, for
 * one, have no single linkage name): the enclosing namespaces and classes. */
std::string qualified_name(Dwarf_Die *named)
{
	const char *name = dwarf_diename(named);
	if (!name)
		return std::string();
	std::string prefix;
	Dwarf_Die *scopes = nullptr;
	int n = dwarf_getscopes_die(named, &scopes);
	for (int i = 1; i < n; ++i) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag != DW_TAG_namespace && tag != DW_TAG_class_type &&
		    tag != DW_TAG_structure_type && tag != DW_TAG_union_type)
			break;
		const char *part = dwarf_diename(&scopes[i]);
		if (!part)
			part = tag == DW_TAG_namespace ? "(anonymous namespace)" : "(anonymous class)";
		prefix = std::string(part) + "::" + prefix;
	}
	free(scopes);
	return prefix + name;
}

std::string scope_name(Dwarf_Die *cu, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!linkage)
		linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (linkage && *linkage)
		return demangled_function_name(linkage);
	Dwarf_Die named;
	if (!find_named_die(die, &named))
		return std::string();
	if (is_cxx(cu))
		return cxx_function_name(qualified_name(&named).c_str());
	return cxx_function_name(dwarf_diename(&named));
}

/*
 * While out.file is a system header and scopes[i] was inlined, moves out to the
 * call site and to the function scope holding it. Returns that scope's index.
 */
int skip_system_headers(Dwarf_Die *cu, Dwarf_Die *scopes, int n, int i, source_location &out)
{
	Dwarf_Files *files = nullptr;
	size_t nfiles = 0;
	if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0)
		return i;
	while (is_system_header(out.file) && dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine) {
		Dwarf_Attribute attr;
		Dwarf_Word file_idx = 0, line = 0;
		if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &attr), &file_idx) != 0 ||
		    dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &attr), &line) != 0 ||
		    line == 0 || line > UINT_MAX || file_idx >= nfiles)
			break;
		const char *file = dwarf_filesrc(files, file_idx, nullptr, nullptr);
		int outer = next_function_scope(scopes, n, i + 1);
		if (!file || !*file || outer < 0)
			break;
		out.file = file;
		out.line = static_cast<unsigned>(line);
		i = outer;
	}
	return i;
}

/* Fills what can be found for vaddr in mod; true when file:line were found. */
bool resolve(Dwfl_Module *mod, uint64_t vaddr, bool is_return_address, source_location &out)
{
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

	bool found = false;
	Dwfl_Line *line = dwfl_module_getsrc(mod, addr);
	int lineno = 0;
	const char *src = line ? dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr)
			       : nullptr;
	if (src && *src && lineno > 0) {
		out.file = src;
		out.line = static_cast<unsigned>(lineno);
		found = true;
	}

	std::string func;
	Dwarf_Addr dwbias = 0;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, &dwbias);
	if (cu) {
		Dwarf_Die *scopes = nullptr;
		int n = dwarf_getscopes(cu, addr - dwbias, &scopes);
		int i = next_function_scope(scopes, n, 0);
		if (i >= 0 && found)
			i = skip_system_headers(cu, scopes, n, i, out);
		if (i >= 0)
			func = scope_name(cu, &scopes[i]);
		free(scopes);
	}
	if (func.empty()) {
		const char *sym = dwfl_module_addrname(mod, addr);
		if (sym && *sym)
			func = demangled_function_name(sym);
	}
	if (!func.empty())
		out.func = func;
	return found;
}

} /* namespace */

struct symbolizer::state {
	/* One opened file; mod is null when it could not be read as ELF, which is
	 * remembered too so that bad files are not re-read on every lookup. */
	struct module {
		dev_t dev = 0;
		ino_t ino = 0;
		off_t size = 0;
		struct timespec mtime = {};
		Dwfl *dwfl = nullptr;
		Dwfl_Module *mod = nullptr;
		uint64_t gen = 0; /* distinct per opening: keys the results */
	};
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
	std::unordered_map<std::string, module> modules;
	std::unordered_map<key, answer, key_hash> results;
	uint64_t next_gen = 1;

	~state() { drop_all(); }

	void drop_all()
	{
		for (auto &m : modules)
			if (m.second.dwfl)
				dwfl_end(m.second.dwfl);
		modules.clear();
		results.clear();
	}

	static bool same_file(const module &m, const struct stat &sb)
	{
		return m.dev == sb.st_dev && m.ino == sb.st_ino && m.size == sb.st_size &&
		       m.mtime.tv_sec == sb.st_mtim.tv_sec && m.mtime.tv_nsec == sb.st_mtim.tv_nsec;
	}

	module &get(const std::string &path, const struct stat &sb)
	{
		auto it = modules.find(path);
		if (it != modules.end()) {
			if (same_file(it->second, sb))
				return it->second;
			/* Rebuilt: its old answers are keyed by the old gen and never hit. */
			if (it->second.dwfl)
				dwfl_end(it->second.dwfl);
			modules.erase(it);
		}
		if (modules.size() >= max_modules)
			drop_all();
		module m;
		m.dev = sb.st_dev;
		m.ino = sb.st_ino;
		m.size = sb.st_size;
		m.mtime = sb.st_mtim;
		m.gen = next_gen++;
		m.dwfl = open_module(path.c_str(), &m.mod);
		return modules.emplace(path, m).first->second;
	}
};

symbolizer::symbolizer() : st_(new state) {}

symbolizer::~symbolizer() = default;

bool symbolizer::lookup(const std::string &path, uint64_t vaddr, bool is_return_address,
			source_location &out)
{
	char hex[2 + 16 + 1];
	snprintf(hex, sizeof(hex), "0x%" PRIx64, vaddr);
	out.file = "??";
	out.line = 0;
	out.func = hex;

	/* Only regular files: opening a FIFO or a device could block or have effects. */
	struct stat sb;
	if (path.empty() || stat(path.c_str(), &sb) != 0 || !S_ISREG(sb.st_mode))
		return false;

	std::lock_guard<std::mutex> guard(st_->lock);
	state::module &m = st_->get(path, sb);
	if (!m.mod)
		return false;
	state::key k = {m.gen, vaddr, is_return_address};
	auto it = st_->results.find(k);
	if (it != st_->results.end()) {
		out = it->second.loc;
		return it->second.found;
	}
	state::answer a = {out, false};
	a.found = resolve(m.mod, vaddr, is_return_address, a.loc);
	if (st_->results.size() >= max_results)
		st_->results.clear();
	st_->results.emplace(k, a);
	out = a.loc;
	return a.found;
}

void symbolizer::clear()
{
	std::lock_guard<std::mutex> guard(st_->lock);
	st_->drop_all();
}

} /* namespace allocinfo */
