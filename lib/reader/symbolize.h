/* SPDX-License-Identifier: MIT */
/*
 * Address -> file:line and function, from the DWARF of an ELF file on disk (libdw).
 *
 * Addresses are link-time virtual addresses: a runtime address minus the load bias
 * of its object (link_map::l_addr), for executables and shared objects alike.
 *
 * What is reported:
 *  - file:line is the innermost line-table row for the address, so code inlined
 *    from another function or file shows where that code is written; the file as
 *    the compiler was given it: relative to the compilation directory
 *    (DW_AT_comp_dir) when it lies under it, as __FILE__ is;
 *  - func is the innermost DWARF subprogram or inlined subroutine covering the
 *    address, so it always names the function that holds file:line. It is the
 *    demangled linkage name, else the DW_AT_name (qualified with its enclosing
 *    namespaces and classes for C++), else the ELF symbol, else "0x<vaddr in hex>",
 *    as a short name of one word, and as a full name with its template arguments
 *    (cxxname.h);
 *  - system headers are skipped: while file:line lies under /usr/include/ (after
 *    resolving "." and "..", as Clang records /usr/bin/../lib/gcc/...) and the
 *    code was inlined, the call site of the inlined function is reported instead
 *    (with the function holding that call), so that `new` inside std::vector
 *    shows the user's line. The walk stops at the first location outside
 *    /usr/include/, or at an out-of-line function, whose location is then kept.
 *
 * Separate debug files are found where libdwfl's standard search looks (build-id
 * under /usr/lib/debug/.build-id, the .gnu_debuglink name next to the object, in
 * its .debug directory and under /usr/lib/debug), by a search of our own: the paths
 * come from an object that a store names, so every file, the object included, is
 * opened as safe_open.h says (a regular file, without blocking), and a debug file
 * is used only when its build-id (or debug link CRC) matches. When DEBUGINFOD_URLS
 * is set no separate file is looked for at all: the lookup would otherwise wait on
 * the network, possibly inside the profiled process. Objects without DWARF then
 * fall back to their symbol table.
 *
 * A lookup costs a binary search once the object is open: the functions of each
 * compilation unit and the object's code symbols are indexed the first time they
 * are needed (libdw's own dwarf_getscopes() and dwfl_module_addrname() are linear
 * in the size of the CU and of the symbol table).
 *
 * Bad input (missing or non-regular file, not ELF, truncated, address outside the
 * object) gives the unknown forms. Files are re-opened when their device, inode,
 * size or mtime change; a file replaced after the process mapped it is not noticed.
 */
#ifndef ALLOCINFO_SYMBOLIZE_H
#define ALLOCINFO_SYMBOLIZE_H

#include <cstdint>
#include <memory>
#include <string>

#include "store_owner.h"

namespace allocinfo {

struct source_location {
	std::string file; /* as the compiler was given it (above); "??" when unknown */
	unsigned line = 0; /* 0 when unknown */
	std::string func;  /* one word; "0x<hex vaddr>" when no name is known */
	std::string full_func; /* C++: with template arguments (cxxname.h); else func */
};

class symbolizer {
public:
	symbolizer();
	~symbolizer();
	symbolizer(const symbolizer &) = delete;
	symbolizer &operator=(const symbolizer &) = delete;

	/*
	 * path: the ELF file (executable or shared object); vaddr: a link-time virtual
	 * address in it. With is_return_address, file:line and func are those of
	 * vaddr - 1 (the call instruction, not the one after it). Always fills out;
	 * returns true when file:line were found. Thread-safe.
	 *
	 * who, when given, is the user the answer is for (the owner of the store that
	 * names the address): unless this reader runs as that user or who is root, the
	 * object and its separate debug file are used only if who could read them
	 * (owner_may_read()), and the unknown forms are given otherwise.
	 */
	bool lookup(const std::string &path, uint64_t vaddr, bool is_return_address,
		    source_location &out, const store_owner *who = nullptr);

	/* Drops every cached result and closes every open file. */
	void clear();

	/*
	 * Closes every open file and drops what was read from them (their mappings,
	 * line tables and indexes: tens of MB for a large C++ program), keeping the
	 * answers that remember_answers() keeps. For a symbolizer inside a profiled
	 * process, which names a snapshot's addresses and should then give the memory
	 * back to the program.
	 */
	void release_files();
	/* From now on, answers are also kept by file identity (device, inode, size,
	 * mtime), in memory, up to the bound of the on-disk cache: they outlive
	 * release_files(). load_cache() does this too. */
	void remember_answers();

	/*
	 * A cache of answers kept on disk between runs of a short-lived reader (the
	 * allocinfo tool): loading an object's debug information is the slow part of a
	 * report. Entries are keyed by the file's identity (device, inode, size, mtime),
	 * so a rebuilt object is looked up afresh. Loading ignores malformed lines;
	 * saving writes only when something was added, through a temporary file renamed
	 * into place. Both return false on I/O errors, which callers may ignore.
	 */
	bool load_cache(const std::string &file);
	bool save_cache(const std::string &file);

private:
	struct state;
	std::unique_ptr<state> st_;
};

} /* namespace allocinfo */

#endif /* ALLOCINFO_SYMBOLIZE_H */
