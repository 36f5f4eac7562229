/* SPDX-License-Identifier: MIT */
/*
 * Function names for reports: turns a C++ __PRETTY_FUNCTION__ or mangled symbol into
 * the one word that follows "func:" in a report line (the short name), or into the
 * full name that JSON adds beside it.
 *
 * The short name is the name as pprof shows C++ functions: qualified, without return
 * type, parameters, cv/ref qualifiers or template arguments, and never with
 * whitespace:
 *
 *   void ns::Foo<int>::bar(int) const           -> ns::Foo::bar
 *   void ns::Foo<T>::bar(int) const [with T = int] -> ns::Foo::bar
 *   void f(T) [with T = int]                    -> f
 *   void* Foo::operator new(std::size_t)        -> Foo::operator_new
 *   Foo::operator const char*() const           -> Foo::operator_const_char*
 *   void (*get_handler(int))(int)               -> get_handler
 *   int (anonymous namespace)::f(int)           -> {anonymous}::f  (GCC's spelling)
 *
 * The only whitespace left after that is inside operator names; it becomes "_"
 * between two identifier characters and is dropped elsewhere.
 *
 * Local entities are qualified by their enclosing function's name, without
 * parameters or "()", as a demangler prints them. Every lambda is "<lambda>",
 * whichever spelling produced it, so GCC, Clang and debug info agree:
 *
 *   GCC    main()::<lambda()>                         -> main::<lambda>
 *   Clang  auto main()::(anonymous class)::operator()() const
 *                                                     -> main::<lambda>
 *   Clang  (lambda at f.cpp:3:5)::operator()          -> <lambda>
 *   demangled  main::{lambda()#1}::operator()() const -> main::<lambda>
 *   demangled  main::$_0::operator()(int) const       -> main::<lambda>
 *
 * ABI tags ("[abi:cxx11]") and clone suffixes ("[clone .cold]") are dropped.
 *
 * The full name keeps the template arguments (a class template's parameters
 * substituted from GCC's "[with T = int]" or Clang's "[T = int]") and the blanks
 * C++ puts in them: "void S<T>::conv(U) [with U = int; T = long int]" ->
 * "S<long int>::conv". It may be long (hundreds of characters for library code).
 *
 * Input without parentheses (a plain C name) is returned unchanged. Input the scanner
 * cannot make sense of (unbalanced brackets, ...) comes back whole with each run of
 * whitespace replaced by "_" (short) or by one blank (full), leading and trailing
 * whitespace removed. Null gives "".
 */
#ifndef ALLOCINFO_CXXNAME_H
#define ALLOCINFO_CXXNAME_H

#include <string>

namespace allocinfo {

/* A GCC/Clang __PRETTY_FUNCTION__ (or demangled name) as one word, rules above. */
std::string cxx_function_name(const char *pretty);

/* Its full name, rules above. */
std::string cxx_full_name(const char *pretty);

/* Demangles an Itanium-ABI symbol ("_Z...") and applies cxx_function_name; any other
 * symbol is returned unchanged (but with whitespace replaced, should it have any). */
std::string demangled_function_name(const char *symbol);

/* The same with cxx_full_name. */
std::string demangled_full_name(const char *symbol);

} /* namespace allocinfo */

#endif /* ALLOCINFO_CXXNAME_H */
