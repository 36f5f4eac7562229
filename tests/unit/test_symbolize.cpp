/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for cxxname (function names as one word) and symbolize (address to
 * file:line and function through libdw). The symbolizer tests need the fixture
 * library built from symbolize_fixture.c, found through $SYMFIXTURE; without it they
 * are skipped.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
extern "C" { /* cmocka 1.1 declares C functions without it */
#include <cmocka.h>
}

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cxxname.h"
#include "symbolize.h"

using allocinfo::cxx_function_name;
using allocinfo::demangled_function_name;
using allocinfo::source_location;
using allocinfo::symbolizer;

namespace {

/* Lines pinned by _Static_assert in symbolize_fixture.c. */
constexpr unsigned line_add = 15;
constexpr unsigned line_call = 20;
constexpr unsigned line_inner = 27;
constexpr unsigned line_sys = 42;
constexpr unsigned line_ctor = 23;	/* symbolize_fixture_cxx.cpp */

bool has_space(const std::string &s)
{
	for (char c : s)
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f')
			return true;
	return false;
}

struct name_case {
	const char *in;
	const char *out;
};

const name_case name_cases[] = {
	/* GCC */
	{"void ns::Foo<T>::bar(int) const [with T = int]", "ns::Foo::bar"},
	{"void f(T) [with T = int]", "f"},
	{"void f(T) [with T = std::map<int, int>]", "f"},
	{"int main()", "main"},
	{"std::vector<int> make(std::size_t)", "make"},
	{"bool operator<(const A&, const A&)", "operator<"},
	{"static void* Foo::operator new(std::size_t)", "Foo::operator_new"},
	{"static void* Foo::operator new [](std::size_t)", "Foo::operator_new[]"},
	{"Foo::operator int() const", "Foo::operator_int"},
	{"Foo::operator const char*() const", "Foo::operator_const_char*"},
	{"Foo& Foo::operator<<=(int)", "Foo::operator<<="},
	{"int Foo::operator()(int)", "Foo::operator()"},
	{"void (* get_handler(int))(int)", "get_handler"},
	{"int (* arr())[3]", "arr"},
	{"int {anonymous}::anon(int)", "{anonymous}::anon"},
	{"main()::<lambda()>", "main::<lambda>"},
	{"main()::<lambda(int, double)>", "main::<lambda>"},
	{"Foo::m() const &::<lambda(int)>", "Foo::m::<lambda>"},
	{"local(int, char)::<lambda(auto:1)> [with auto:1 = int]", "local::<lambda>"},
	{"void local(int, char)::L::m()", "local::L::m"},
	{"long long unsigned int operator\"\"_km(long long unsigned int)", "operator\"\"_km"},
	{"static T S<T>::conv(U) [with U = int; T = long int]", "S::conv"},
	{"decltype (t + 1) g(T) [with T = int]", "g"},
	{"Foo::~Foo()", "Foo::~Foo"},
	/* Clang */
	{"void ns::Foo<int>::bar(int) const [T = int]", "ns::Foo::bar"},
	{"void f(T) [T = int]", "f"},
	{"bool operator<(const A &, const A &)", "operator<"},
	{"static void *Foo::operator new(std::size_t)", "Foo::operator_new"},
	{"static void *Foo::operator new[](std::size_t)", "Foo::operator_new[]"},
	{"int Foo::operator int() const", "Foo::operator_int"},
	{"const char *Foo::operator const char *() const", "Foo::operator_const_char*"},
	{"void (*get_handler(int))(int)", "get_handler"},
	{"int (anonymous namespace)::anon(int)", "{anonymous}::anon"},
	{"auto main()::(anonymous class)::operator()() const", "main::<lambda>"},
	{"auto Foo::m()::(anonymous class)::operator()(int) const", "Foo::m::<lambda>"},
	{"auto main()::(anonymous class)::operator()()::(anonymous class)::operator()() const",
	 "main::<lambda>::<lambda>"},
	{"auto (lambda at x.cpp:3:5)::operator()() const", "<lambda>"},
	{"static T S<long>::conv(U) [T = long, U = int]", "S::conv"},
	{"std::map<int, unsigned int> f(std::map<int, unsigned int>)", "f"},
	{"void Foo<std::map<int, unsigned int> >::g()", "Foo::g"},
	/* Plain C and demangler output */
	{"main", "main"},
	{"symfix_add", "symfix_add"},
	/* DW_AT_name qualified by its scopes: no parentheses */
	{"std::vector<long int, std::allocator<long int> >::push_back", "std::vector::push_back"},
	{"ns::Cache<int>::insert", "ns::Cache::insert"},
	{"main::{lambda()#1}::operator()() const", "main::<lambda>"},
	{"main::$_0::operator()(int) const", "main::<lambda>"},
	{"abi[abi:cxx11]()", "abi"},
	{"foo(int) [clone .cold]", "foo"},
};

/* Full names: template arguments and C++'s blanks kept, parameters dropped. */
const name_case full_cases[] = {
	{"static T S<T>::conv(U) [with U = int; T = long int]", "S<long int>::conv"},
	{"void ns::Foo<T>::bar(int) const [with T = int]", "ns::Foo<int>::bar"},
	{"void Foo<std::map<int, unsigned int> >::g()", "Foo<std::map<int, unsigned int> >::g"},
	{"main()::<lambda(int, double)>", "main::<lambda>"},
	{"static void* Foo::operator new(std::size_t)", "Foo::operator new"},
	{"Foo::operator const char*() const", "Foo::operator const char*"},
	{"int (anonymous namespace)::anon(int)", "{anonymous}::anon"},
	{"main", "main"},
	{"std::vector<long int>::push_back", "std::vector<long int>::push_back"},
	{"vtable  for\tFoo", "vtable for Foo"},
};

void test_cxx_full_names(void **)
{
	for (const name_case &c : full_cases) {
		std::string got = allocinfo::cxx_full_name(c.in);
		if (got != c.out)
			print_error("input: %s\n", c.in);
		assert_string_equal(got.c_str(), c.out);
	}
	assert_string_equal(allocinfo::demangled_full_name("_ZNK2ns3FooIlE3barEi").c_str(),
			    "ns::Foo<long>::bar");
	assert_string_equal(allocinfo::demangled_full_name("_ZN2ns3FooIlE3barEv").c_str(),
			    "ns::Foo<long>::bar");
	assert_string_equal(allocinfo::demangled_full_name("malloc").c_str(), "malloc");
	assert_string_equal(allocinfo::demangled_full_name(nullptr).c_str(), "");
}

void test_cxx_names(void **)
{
	for (const name_case &c : name_cases) {
		std::string got = cxx_function_name(c.in);
		if (got != c.out)
			print_error("input: %s\n", c.in);
		assert_string_equal(got.c_str(), c.out);
	}
}

void test_cxx_names_bad_input(void **)
{
	assert_string_equal(cxx_function_name(nullptr).c_str(), "");
	assert_string_equal(cxx_function_name("").c_str(), "");
	assert_string_equal(cxx_function_name(" \t\n").c_str(), "");
	/* Unbalanced: the input, whitespace replaced. */
	assert_string_equal(cxx_function_name("void f(int").c_str(), "void_f(int");
	assert_string_equal(cxx_function_name("void f<int(int)").c_str(), "void_f<int(int)");
	assert_string_equal(cxx_function_name("int a) b(").c_str(), "int_a)_b(");
	assert_string_equal(cxx_function_name("vtable for\tFoo").c_str(), "vtable_for_Foo");

	const char *odd[] = {
		"(", ")", "<", ">", "[", "]", "::", "operator", "operator (", "x::operator",
		"operator\"", "(*)(", "( * ( * (", "f()::", "::f()", "a b\n(c d)", "(((((((((()",
		"decltype(", "[with T = int]", "operator int", "f() [", "<lambda", "{lambda(",
	};
	for (const char *s : odd) {
		std::string got = cxx_function_name(s);
		if (has_space(got))
			print_error("input: %s\n", s);
		assert_false(has_space(got));
	}

	/* Long and deeply nested inputs come back quickly and in one piece. */
	std::string deep;
	for (int i = 0; i < 100000; ++i)
		deep += "(*";
	deep += "f(int)";
	assert_false(has_space(cxx_function_name(deep.c_str())));
	std::string long_name = "void ";
	for (int i = 0; i < 100000; ++i)
		long_name += "ns::";
	long_name += "f(int, char) const";
	std::string got = cxx_function_name(long_name.c_str());
	assert_int_equal(got.size(), 100000 * 4 + 1);
	assert_false(has_space(got));
}

void test_demangled_names(void **)
{
	assert_string_equal(demangled_function_name("_ZN2ns3Foo3barEi").c_str(), "ns::Foo::bar");
	assert_string_equal(demangled_function_name("_Znwm").c_str(), "operator_new");
	assert_string_equal(demangled_function_name("_Znam").c_str(), "operator_new[]");
	assert_string_equal(demangled_function_name("_ZNK2ns3FooIiE3barEi").c_str(),
			    "ns::Foo::bar");
	assert_string_equal(demangled_function_name("_ZNK3FoocviEv").c_str(), "Foo::operator_int");
	assert_string_equal(demangled_function_name("_ZN12_GLOBAL__N_14anonEi").c_str(),
			    "{anonymous}::anon");
	assert_string_equal(demangled_function_name("_ZZ4mainENKUlvE_clEv").c_str(),
			    "main::<lambda>");
	assert_string_equal(demangled_function_name("_ZZNKR3Foo1mEvENKUliE_clEi").c_str(),
			    "Foo::m::<lambda>");
	assert_string_equal(demangled_function_name("_ZZ4mainENK3$_0clEi").c_str(), "main::<lambda>");
	assert_string_equal(demangled_function_name("_Z3abiB5cxx11v").c_str(), "abi");
	assert_string_equal(demangled_function_name("_Z3foov.cold").c_str(), "foo");
	/* Not mangled, or not validly: unchanged. */
	assert_string_equal(demangled_function_name("malloc").c_str(), "malloc");
	assert_string_equal(demangled_function_name("foo.part.0").c_str(), "foo.part.0");
	assert_string_equal(demangled_function_name("_Z").c_str(), "_Z");
	assert_string_equal(demangled_function_name("_Zx!").c_str(), "_Zx!");
	assert_string_equal(demangled_function_name("").c_str(), "");
	assert_string_equal(demangled_function_name(nullptr).c_str(), "");
}

/* The fixture library, loaded once. */
struct fixture {
	std::string path;
	void *handle = nullptr;
	uintptr_t l_addr = 0;
};

fixture fix;
std::vector<std::string> temp_files;

/* Skips the calling test when the fixture is not available. */
void need_fixture()
{
	if (fix.handle)
		return;
	const char *path = getenv("SYMFIXTURE");
	if (!path || !*path) {
		print_message("SYMFIXTURE is not set: skipping\n");
		skip();
	}
	fix.path = path;
	fix.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!fix.handle)
		print_error("dlopen %s: %s\n", path, dlerror());
	assert_non_null(fix.handle);
	void *add = dlsym(fix.handle, "symfix_add");
	assert_non_null(add);
	Dl_info info;
	struct link_map *lm = nullptr;
	assert_int_not_equal(dladdr1(add, &info, reinterpret_cast<void **>(&lm), RTLD_DL_LINKMAP), 0);
	assert_non_null(lm);
	fix.l_addr = lm->l_addr;
}

void *fixture_sym(const char *name)
{
	void *p = dlsym(fix.handle, name);
	assert_non_null(p);
	return p;
}

uint64_t vaddr_of(const void *p)
{
	return reinterpret_cast<uintptr_t>(p) - fix.l_addr;
}

const char *base_name(const std::string &path)
{
	const char *s = strrchr(path.c_str(), '/');
	return s ? s + 1 : path.c_str();
}

void expect_location(const source_location &loc, const char *file, unsigned line, const char *func)
{
	assert_string_equal(base_name(loc.file), file);
	assert_int_equal(loc.line, line);
	assert_string_equal(loc.func.c_str(), func);
}

std::string hex(uint64_t v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	return buf;
}

void expect_unknown(symbolizer &sym, const std::string &path, uint64_t vaddr)
{
	source_location loc;
	loc.file = "stale";
	loc.line = 99;
	loc.func = "stale";
	assert_false(sym.lookup(path, vaddr, false, loc));
	assert_string_equal(loc.file.c_str(), "??");
	assert_int_equal(loc.line, 0);
	assert_string_equal(loc.func.c_str(), hex(vaddr).c_str());
	assert_false(sym.lookup(path, vaddr, true, loc));
	assert_string_equal(loc.file.c_str(), "??");
	assert_int_equal(loc.line, 0);
	assert_string_equal(loc.func.c_str(), hex(vaddr).c_str());
}

/* The return address of the fixture's call into us: a point inside its code. */
void *last_return;

extern "C" __attribute__((noinline)) void record_return(void)
{
	last_return = __builtin_return_address(0);
	__asm__ volatile("" ::: "memory"); /* keep this a real call, not a tail call */
}

typedef int (*call_fn)(void (*)(void), int);

uint64_t return_vaddr_from(const char *fn)
{
	call_fn f = reinterpret_cast<call_fn>(fixture_sym(fn));
	last_return = nullptr;
	f(record_return, 1);
	assert_non_null(last_return);
	return vaddr_of(last_return);
}

std::vector<char> read_file(const std::string &path)
{
	std::vector<char> data;
	FILE *f = fopen(path.c_str(), "rb");
	assert_non_null(f);
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		data.insert(data.end(), buf, buf + n);
	fclose(f);
	return data;
}

std::string write_temp(const char *data, size_t size)
{
	const char *dir = getenv("TMPDIR");
	std::string path = std::string(dir && *dir ? dir : "/tmp") + "/test_symbolize.XXXXXX";
	int fd = mkstemp(&path[0]);
	assert_true(fd >= 0);
	temp_files.push_back(path);
	assert_int_equal(write(fd, data, size), static_cast<ssize_t>(size));
	close(fd);
	return path;
}

void test_function_entry(void **)
{
	need_fixture();
	symbolizer sym;
	source_location loc;
	uint64_t v = vaddr_of(fixture_sym("symfix_add"));
	assert_true(sym.lookup(fix.path, v, false, loc));
	expect_location(loc, "symbolize_fixture.c", line_add, "symfix_add");
	/* Cached, and the same again after clear(). */
	assert_true(sym.lookup(fix.path, v, false, loc));
	expect_location(loc, "symbolize_fixture.c", line_add, "symfix_add");
	sym.clear();
	assert_true(sym.lookup(fix.path, v, false, loc));
	expect_location(loc, "symbolize_fixture.c", line_add, "symfix_add");
}

/* Answers saved to the on-disk cache come back the same in another symbolizer, and
 * the cache's hostile lines are ignored. */
void test_disk_cache(void **)
{
	need_fixture();
	std::string cache = write_temp("garbage without tabs\n\t\t\t\t\n", 25);
	uint64_t v = vaddr_of(fixture_sym("symfix_add"));
	source_location loc;
	{
		symbolizer sym;
		assert_true(sym.load_cache(cache));
		assert_true(sym.lookup(fix.path, v, false, loc));
		assert_true(sym.save_cache(cache));
	}
	std::vector<char> text = read_file(cache);
	std::string s(text.begin(), text.end());
	assert_non_null(strstr(s.c_str(), "symbolize_fixture.c\tsymfix_add\tsymfix_add\n"));
	assert_null(strstr(s.c_str(), "garbage"));
	symbolizer again;
	assert_true(again.load_cache(cache));
	assert_true(again.lookup(fix.path, v, false, loc));
	expect_location(loc, "symbolize_fixture.c", line_add, "symfix_add");
}

void test_return_address(void **)
{
	need_fixture();
	symbolizer sym;
	source_location loc;
	assert_true(sym.lookup(fix.path, return_vaddr_from("symfix_call"), true, loc));
	expect_location(loc, "symbolize_fixture.c", line_call, "symfix_call");
}

void test_inlined(void **)
{
	need_fixture();
	symbolizer sym;
	source_location loc;
	assert_true(sym.lookup(fix.path, return_vaddr_from("symfix_outer"), true, loc));
	expect_location(loc, "symbolize_fixture.c", line_inner, "symfix_inner");
}

void test_system_header_skipped(void **)
{
	need_fixture();
	symbolizer sym;
	source_location loc;
	assert_true(sym.lookup(fix.path, return_vaddr_from("symfix_sys"), true, loc));
	expect_location(loc, "symbolize_fixture.c", line_sys, "symfix_sys");
}

void test_bad_input(void **)
{
	need_fixture();
	symbolizer sym;
	uint64_t v = vaddr_of(fixture_sym("symfix_add"));

	expect_unknown(sym, "/nonexistent/libnothing.so", v);
	expect_unknown(sym, "", v);
	expect_unknown(sym, "/dev/null", v);
	expect_unknown(sym, "/", v);
	/* Addresses outside the object. */
	expect_unknown(sym, fix.path, 0x7fffdeadbeefull);
	expect_unknown(sym, fix.path, ~0ull);
	expect_unknown(sym, fix.path, 0);

	const char text[] = "not an ELF file\n";
	expect_unknown(sym, write_temp(text, sizeof(text) - 1), v);
	expect_unknown(sym, write_temp("", 0), v);

	std::vector<char> elf = read_file(fix.path);
	assert_true(elf.size() > 4096);
	expect_unknown(sym, write_temp(elf.data(), 64), v);
	expect_unknown(sym, write_temp(elf.data(), 1000), v);

	/* Cut anywhere, it must not crash; DWARF and .symtab sit late in the file, so
	 * file:line is never found (.dynsym may still name the function). */
	for (size_t cut = 4; cut < elf.size(); cut += elf.size() / 23 + 1) {
		source_location loc;
		std::string path = write_temp(elf.data(), cut);
		bool found = sym.lookup(path, v, false, loc);
		if (cut < elf.size() / 2) {
			assert_false(found);
			assert_string_equal(loc.file.c_str(), "??");
			assert_int_equal(loc.line, 0);
		}
		assert_false(has_space(loc.func));
	}
}

void test_rebuilt_file(void **)
{
	need_fixture();
	symbolizer sym;
	source_location loc;
	uint64_t v = vaddr_of(fixture_sym("symfix_add"));
	std::vector<char> elf = read_file(fix.path);
	std::string copy = write_temp(elf.data(), elf.size());
	assert_true(sym.lookup(copy, v, false, loc));
	expect_location(loc, "symbolize_fixture.c", line_add, "symfix_add");

	/* Replaced by something else under the same name: re-read, not cached. */
	std::string junk = write_temp(elf.data(), 64);
	assert_int_equal(rename(junk.c_str(), copy.c_str()), 0);
	expect_unknown(sym, copy, v);
}

void test_symbol_table_fallback(void **)
{
	need_fixture();
	symbolizer sym;
	source_location loc;
	uint64_t v = vaddr_of(fixture_sym("symfix_add"));
	std::vector<char> elf = read_file(fix.path);
	std::string copy = write_temp(elf.data(), elf.size());
	std::string cmd = "objcopy --strip-debug '" + copy + "' 2>/dev/null";
	if (system(cmd.c_str()) != 0) {
		print_message("objcopy failed: skipping\n");
		skip();
	}
	assert_false(sym.lookup(copy, v, false, loc));
	assert_string_equal(loc.file.c_str(), "??");
	assert_int_equal(loc.line, 0);
	assert_string_equal(loc.func.c_str(), "symfix_add");
}

void test_threads(void **)
{
	need_fixture();
	symbolizer sym;
	const uint64_t add = vaddr_of(fixture_sym("symfix_add"));
	const uint64_t call = return_vaddr_from("symfix_call");
	const uint64_t inner = return_vaddr_from("symfix_outer");
	std::atomic<int> bad(0);
	std::vector<std::thread> threads;
	for (int t = 0; t < 4; ++t) {
		threads.emplace_back([&, t] {
			for (int i = 0; i < 300; ++i) {
				source_location loc;
				if (t == 0 && i % 50 == 0)
					sym.clear();
				if (!sym.lookup(fix.path, add, false, loc) || loc.line != line_add ||
				    loc.func != "symfix_add")
					++bad;
				if (!sym.lookup(fix.path, call, true, loc) || loc.line != line_call ||
				    loc.func != "symfix_call")
					++bad;
				if (!sym.lookup(fix.path, inner, true, loc) || loc.line != line_inner ||
				    loc.func != "symfix_inner")
					++bad;
				if (sym.lookup(fix.path, 0x7fff0000ull + i, false, loc))
					++bad;
			}
		});
	}
	for (std::thread &th : threads)
		th.join();
	assert_int_equal(bad.load(), 0);
}

/* An inlined constructor in a -fdebug-types-section build: named with its
 * namespaces and class, at its line. */
void test_type_unit_constructor(void **)
{
	need_fixture();
	symbolizer sym;
	source_location loc;
	assert_true(sym.lookup(fix.path, return_vaddr_from("symfix_ctor"), true, loc));
	expect_location(loc, "symbolize_fixture_cxx.cpp", line_ctor,
			"symfix_outer_ns::inner::widget::widget");
}

/* The heap in use, where the test can see it (not under a sanitizer's allocator). */
bool heap_in_use(size_t *bytes)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	(void)bytes;
	return false;
#else
	*bytes = mallinfo2().uordblks;
	return true;
#endif
}

/* release_files() gives back what was read, and the answers stay. */
void test_release_files(void **)
{
	need_fixture();
	symbolizer sym;
	sym.remember_answers();
	source_location loc;
	const uint64_t add = vaddr_of(fixture_sym("symfix_add"));
	const uint64_t call = return_vaddr_from("symfix_call");
	size_t before = 0, open = 0, released = 0, again = 0;
	bool measured = heap_in_use(&before);
	assert_true(sym.lookup(fix.path, add, false, loc));
	heap_in_use(&open);
	sym.release_files();
	heap_in_use(&released);

	/* Answered from memory: nothing is read again. */
	assert_true(sym.lookup(fix.path, add, false, loc));
	expect_location(loc, "symbolize_fixture.c", line_add, "symfix_add");
	heap_in_use(&again);
	if (measured) {
		print_message("heap: %zu bytes with the file open, %zu after release_files()\n",
			      open - before, released - before);
		assert_true(open - before > 8192);
		assert_true(released - before < 2048);
		assert_true(again - released < 512);
	}

	/* A new address opens the file again. */
	assert_true(sym.lookup(fix.path, call, true, loc));
	expect_location(loc, "symbolize_fixture.c", line_call, "symfix_call");
	sym.release_files();
	assert_true(sym.lookup(fix.path, call, true, loc));
	expect_location(loc, "symbolize_fixture.c", line_call, "symfix_call");
}

int remove_temp_files(void **)
{
	for (const std::string &p : temp_files)
		unlink(p.c_str());
	temp_files.clear();
	return 0;
}

} /* namespace */

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cxx_names),
		cmocka_unit_test(test_cxx_full_names),
		cmocka_unit_test(test_cxx_names_bad_input),
		cmocka_unit_test(test_demangled_names),
		cmocka_unit_test(test_function_entry),
		cmocka_unit_test(test_disk_cache),
		cmocka_unit_test(test_return_address),
		cmocka_unit_test(test_inlined),
		cmocka_unit_test(test_system_header_skipped),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_rebuilt_file),
		cmocka_unit_test(test_symbol_table_fallback),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_release_files),
		cmocka_unit_test(test_type_unit_constructor),
	};
	return cmocka_run_group_tests(tests, nullptr, remove_temp_files);
}
