/* SPDX-License-Identifier: MIT */
/*
 * Function names for reports: turns a C++ __PRETTY_FUNCTION__ or mangled symbol into
 * the one word that follows "func:" in a report line.
 *
 * The result is the qualified name without return type, parameters, cv/ref
 * qualifiers or template-parameter bindings, and never contains whitespace:
 *
 *   void ns::Foo<int>::bar(int) const           -> ns::Foo<int>::bar
 *   void ns::Foo<T>::bar(int) const [with T = int] -> ns::Foo<int>::bar
 *                         (class template parameters are substituted from the
 *                          "[with ...]" / "[T = ...]" suffix, so GCC and Clang agree)
 *   void f(T) [with T = int]                    -> f
 *   void* Foo::operator new(std::size_t)        -> Foo::operator_new
 *   Foo::operator const char*() const           -> Foo::operator_const_char*
 *   void (*get_handler(int))(int)               -> get_handler
 *   int (anonymous namespace)::f(int)           -> {anonymous}::f  (GCC's spelling)
 *
 * Whitespace left inside the name becomes "_" between two identifier characters
 * ("unsigned int" -> "unsigned_int") and is dropped elsewhere
 * ("std::map<int, int>" -> "std::map<int,int>").
 *
 * Local entities keep their enclosing function as "name()", parameters dropped.
 * Every lambda is "<lambda>", whichever spelling produced it:
 *
 *   GCC    main()::<lambda()>                         -> main()::<lambda>
 *   Clang  auto main()::(anonymous class)::operator()() const
 *                                                     -> main()::<lambda>
 *   Clang  (lambda at f.cpp:3:5)::operator()          -> <lambda>
 *   demangled  main::{lambda()#1}::operator()() const -> main::<lambda>
 *   demangled  main::$_0::operator()(int) const       -> main::<lambda>
 *
 * (extern "C" main is not mangled, so the demangled form has no "()" after it.)
 * ABI tags ("[abi:cxx11]") and clone suffixes ("[clone .cold]") are dropped.
 *
 * Input without parentheses (a plain C name) is returned unchanged. Input the scanner
 * cannot make sense of (unbalanced brackets, ...) comes back whole with each run of
 * whitespace replaced by "_" and leading/trailing whitespace removed. Null gives "".
 */
#ifndef ALLOCINFO_CXXNAME_H
#define ALLOCINFO_CXXNAME_H

#include <string>

namespace allocinfo {

/* A GCC/Clang __PRETTY_FUNCTION__ (or demangled name) as one word, rules above. */
std::string cxx_function_name(const char *pretty);

/* Demangles an Itanium-ABI symbol ("_Z...") and applies cxx_function_name; any other
 * symbol is returned unchanged (but with whitespace replaced, should it have any). */
std::string demangled_function_name(const char *symbol);

} /* namespace allocinfo */

#endif /* ALLOCINFO_CXXNAME_H */
