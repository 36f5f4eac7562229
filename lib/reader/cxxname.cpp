/* SPDX-License-Identifier: MIT */
/*
 * A small hand-written scanner that cuts the function name out of a C++ declaration
 * as printed by __PRETTY_FUNCTION__ or a demangler. See cxxname.h for the rules.
 * No recursion and bounded rescans, so any input is handled in about linear time.
 */
#include "cxxname.h"

#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <utility>
#include <vector>

namespace allocinfo {

namespace {

bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Bytes >= 0x80 count as identifier characters: UTF-8 names stay whole. */
bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$' || static_cast<unsigned char>(c) >= 0x80;
}

bool starts_with(const char *p, const char *e, const char *word)
{
	size_t n = strlen(word);
	return static_cast<size_t>(e - p) >= n && memcmp(p, word, n) == 0;
}

/* `word` at p as a whole identifier. */
bool keyword_at(const char *p, const char *e, const char *word)
{
	size_t n = strlen(word);
	return starts_with(p, e, word) && (p + n == e || !is_ident(p[n]));
}

const char *skip_spaces(const char *p, const char *e)
{
	while (p < e && is_space(*p))
		++p;
	return p;
}

/* Appends [b, e) with whitespace squeezed: "_" between identifier characters, else
 * nothing. Looks at out's last character so that pieces join the same way. */
void squeeze_append(std::string &out, const char *b, const char *e)
{
	bool pending = false;
	for (; b < e; ++b) {
		if (is_space(*b)) {
			pending = true;
			continue;
		}
		if (pending && !out.empty() && is_ident(out.back()) && is_ident(*b))
			out += '_';
		pending = false;
		out += *b;
	}
}

void squeeze_append(std::string &out, const std::string &s)
{
	squeeze_append(out, s.data(), s.data() + s.size());
}

/* [b, e) trimmed, each run of whitespace replaced by sep. */
std::string join_words(const char *b, const char *e, char sep)
{
	std::string out;
	b = skip_spaces(b, e);
	while (e > b && is_space(e[-1]))
		--e;
	bool pending = false;
	for (; b < e; ++b) {
		if (is_space(*b)) {
			pending = true;
			continue;
		}
		if (pending)
			out += sep;
		pending = false;
		out += *b;
	}
	return out;
}

/* [b, e) trimmed, each run of whitespace one blank. */
std::string collapse_spaces(const char *b, const char *e)
{
	return join_words(b, e, ' ');
}

/* The whole input, whitespace runs turned into "_": the answer when parsing fails. */
std::string fallback(const char *b, const char *e)
{
	return join_words(b, e, '_');
}

/*
 * p points at '(', '[', '{' or '<'; returns just past its match, or null when the
 * input ends first or a closer does not match. A '<' still open when a ')', ']' or
 * '}' closes was a less-than; a '>' with no '<' open is a greater-than or "->".
 */
const char *skip_group(const char *p, const char *e)
{
	std::string stack;
	for (; p < e; ++p) {
		char c = *p;
		switch (c) {
		case '(':
			stack += ')';
			break;
		case '[':
			stack += ']';
			break;
		case '{':
			stack += '}';
			break;
		case '<':
			stack += '>';
			break;
		case '>':
			if (!stack.empty() && stack.back() == '>') {
				stack.pop_back();
				if (stack.empty())
					return p + 1;
			}
			break;
		case ')':
		case ']':
		case '}':
			while (!stack.empty() && stack.back() == '>')
				stack.pop_back();
			if (stack.empty() || stack.back() != c)
				return nullptr;
			stack.pop_back();
			if (stack.empty())
				return p + 1;
			break;
		default:
			break;
		}
	}
	return nullptr;
}

/* Past "const", "volatile", "&", "&&" (a member function's qualifiers). */
const char *skip_qualifiers(const char *p, const char *e)
{
	for (;;) {
		p = skip_spaces(p, e);
		if (keyword_at(p, e, "const"))
			p += 5;
		else if (keyword_at(p, e, "volatile"))
			p += 8;
		else if (p < e && *p == '&')
			++p;
		else
			return p;
	}
}

/* Words whose parenthesised operand belongs to a return type: "decltype(x) f()". */
bool is_type_operator(const std::string &w)
{
	static const char *const words[] = {
		"decltype", "__decltype", "typeof", "__typeof", "__typeof__",
		"__underlying_type", "__attribute__", "alignas", "_Alignas",
	};
	for (const char *k : words)
		if (w == k)
			return true;
	return false;
}

/* Overloadable operator tokens, longer before their prefixes. */
const char *const operator_tokens[] = {
	"<=>", "<<=", ">>=", "->*", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
	"++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "->",
	"+", "-", "*", "/", "%", "^", "&", "|", "~", "!", "=", "<", ">", ",",
};

/*
 * p points just past the keyword "operator". Appends the operator's one-word name to
 * out ("operator_new[]", "operator<<", "operator()", "operator_const_char*") and
 * returns where the parameter list should start, or null when nothing fits.
 */
const char *parse_operator(const char *p, const char *e, std::string &out)
{
	out += "operator";
	const char *q = skip_spaces(p, e);
	if (q >= e)
		return nullptr;
	if (is_ident(*q)) {
		if (keyword_at(q, e, "new") || keyword_at(q, e, "delete")) {
			const char *w = q;
			while (q < e && is_ident(*q))
				++q;
			out += ' ';
			out.append(w, q);
			const char *r = skip_spaces(q, e);
			if (r + 1 < e && r[0] == '[' && r[1] == ']') {
				out += "[]";
				q = r + 2;
			}
			return q;
		}
		if (keyword_at(q, e, "co_await")) {
			out += " co_await";
			return q + 8;
		}
		/* A conversion: the type runs up to the parameter list. A parenthesised
		 * group opening with '*', '&' or '^' is part of a function pointer type. */
		const char *t = q;
		while (t < e) {
			if (*t == '(') {
				const char *g = skip_group(t, e);
				if (!g)
					return nullptr;
				const char *in = skip_spaces(t + 1, g);
				if (*in != '*' && *in != '&' && *in != '^')
					break;
				t = g;
			} else if (*t == '<' || *t == '[') {
				t = skip_group(t, e);
				if (!t)
					return nullptr;
			} else {
				++t;
			}
		}
		out += ' ';
		out += collapse_spaces(q, t);
		return t;
	}
	if (*q == '"') {
		/* A literal operator: operator""_km, or operator"" _km from demanglers. */
		if (q + 1 >= e || q[1] != '"')
			return nullptr;
		out += "\"\"";
		q = skip_spaces(q + 2, e);
		const char *w = q;
		while (q < e && is_ident(*q))
			++q;
		out.append(w, q);
		return q;
	}
	if (*q == '(' || *q == '[') {
		char close = *q == '(' ? ')' : ']';
		const char *r = skip_spaces(q + 1, e);
		if (r >= e || *r != close)
			return nullptr;
		out += *q;
		out += close;
		q = r + 1;
	} else {
		const char *tok = nullptr;
		for (const char *t : operator_tokens) {
			if (starts_with(q, e, t)) {
				tok = t;
				break;
			}
		}
		if (!tok)
			return nullptr;
		out += tok;
		q += strlen(tok);
	}
	/* Explicit template arguments, as in "operator< <int>". */
	const char *r = skip_spaces(q, e);
	if (r < e && *r == '<') {
		const char *g = skip_group(r, e);
		if (g) {
			out.append(r, g);
			q = g;
		}
	}
	return q;
}

/* One "::"-separated part of the name, text still unsqueezed. */
struct component {
	std::string text;
	bool anon_class = false; /* Clang's "(anonymous class)": a lambda before ::operator() */
	bool lambda = false;     /* already "<lambda>" */
	bool is_operator = false;
};

/* Parses the declaration in [b, e) into comps; *rest gets where the parameter list
 * starts (or e). Returns false when the input does not look like a declaration. */
bool parse_name(const char *b, const char *e, std::vector<component> &comps, const char **rest)
{
	/* "(*name(args))(args)" is parsed again on the inner text; each pass is
	 * shorter, and a few passes cover any real declarator. */
	for (int pass = 0; pass < 16; ++pass) {
		comps.clear();
		component cur;
		const char *p = b;
		bool restart = false;
		*rest = e;

		while (p < e && !restart) {
			char c = *p;
			if (is_space(c)) {
				const char *q = skip_spaces(p, e);
				if (q < e && *q == '[' && (!cur.text.empty() || !comps.empty())) {
					*rest = q; /* GCC lambda: "f()::<lambda()> [with ...]" */
					break;
				}
				if (q < e && *q == '(' && comps.empty() && is_type_operator(cur.text)) {
					const char *g = skip_group(q, e);
					if (!g)
						return false;
					p = g;
					continue;
				}
				/* The end of the return type (or of a leading "static"). */
				comps.clear();
				cur = component();
				p = q;
				continue;
			}
			if (is_ident(c)) {
				const char *q = p;
				while (q < e && is_ident(*q))
					++q;
				if (cur.text.empty() && q - p == 8 && memcmp(p, "operator", 8) == 0) {
					q = parse_operator(q, e, cur.text);
					if (!q)
						return false;
					cur.is_operator = true;
				} else {
					cur.text.append(p, q);
				}
				p = q;
				continue;
			}
			if (c == ':' && p + 1 < e && p[1] == ':') {
				if (!cur.text.empty())
					comps.push_back(cur);
				cur = component();
				p += 2;
				continue;
			}
			if (c == '<' || c == '{') {
				const char *q = skip_group(p, e);
				if (!q)
					return false;
				if (starts_with(p + 1, q, "lambda")) {
					cur.text += "<lambda>";
					cur.lambda = true;
				} else {
					cur.text.append(p, q);
				}
				p = q;
				continue;
			}
			if (c == '[') {
				const char *q = skip_group(p, e);
				if (!q)
					return false;
				if (starts_with(p, q, "[abi:")) {
					p = q;
					continue;
				}
				if (cur.text.empty() && comps.empty())
					return false;
				*rest = p;
				break;
			}
			if (c == '(') {
				const char *q = skip_group(p, e);
				if (!q)
					return false;
				const char *r = skip_qualifiers(q, e);
				if (r + 1 < e && r[0] == ':' && r[1] == ':') {
					if (cur.text.empty()) {
						/* A scope spelled in parentheses by Clang:
						 * "(anonymous namespace)", "(anonymous class)",
						 * "(lambda at f.cpp:3:5)", "(unnamed struct at ...)". */
						const char *at = nullptr;
						for (const char *s = p; s + 4 <= q; ++s)
							if (starts_with(s, q, " at "))
								at = s;
						if (starts_with(p, q, "(lambda")) {
							cur.text = "<lambda>";
							cur.lambda = true;
						} else if (at) {
							cur.text.assign(p, at);
							cur.text += ')';
						} else {
							cur.text.assign(p, q);
							cur.anon_class = starts_with(p, q, "(anonymous class)");
						}
					}
					comps.push_back(cur);
					cur = component();
					p = r + 2;
					continue;
				}
				if (cur.text.empty() && comps.empty()) {
					/* After the return type: either a declarator such as
					 * "(*get_handler(int))(int)" or part of the type. */
					const char *in = skip_spaces(p + 1, q - 1);
					if (in < q - 1 && (*in == '*' || *in == '&' || *in == '^')) {
						b = in;
						e = q - 1;
						restart = true;
						continue;
					}
					p = q;
					continue;
				}
				if (comps.empty() && is_type_operator(cur.text)) {
					cur.text.append(p, q);
					p = q;
					continue;
				}
				*rest = p; /* the parameter list */
				break;
			}
			if (c == '*' || c == '&') {
				/* Punctuation of a return type: "Foo &Foo::get()". */
				comps.clear();
				cur = component();
				++p;
				continue;
			}
			if (c == ')' || c == ']' || c == '}' || c == '>' || c == ',' || c == ';')
				return false;
			cur.text += c;
			++p;
		}
		if (restart)
			continue;
		if (!cur.text.empty())
			comps.push_back(cur);
		return !comps.empty();
	}
	return false;
}

/* Template parameter bindings from "[with T = int; U = char]" or "[T = int, U = char]". */
using bindings = std::vector<std::pair<std::string, std::string>>;

void parse_bindings(const char *b, const char *e, bindings &out)
{
	b = skip_spaces(b, e);
	if (keyword_at(b, e, "with"))
		b += 4;
	while (b < e) {
		/* One item ends at a ';' or ',' outside brackets. */
		int depth = 0;
		const char *end = b;
		for (; end < e; ++end) {
			char c = *end;
			if (c == '(' || c == '[' || c == '{' || c == '<')
				++depth;
			else if ((c == ')' || c == ']' || c == '}' || c == '>') && depth > 0)
				--depth;
			else if ((c == ';' || c == ',') && depth == 0)
				break;
		}
		const char *eq = nullptr;
		for (const char *s = b; s + 3 <= end; ++s) {
			if (starts_with(s, end, " = ")) {
				eq = s;
				break;
			}
		}
		if (eq) {
			/* The name is the last word before " = ": "long unsigned int N = 3". */
			const char *ne = eq;
			while (ne > b && is_space(ne[-1]))
				--ne;
			const char *nb = ne;
			while (nb > b && is_ident(nb[-1]))
				--nb;
			if (nb < ne && (nb == b || is_space(nb[-1]))) {
				const char *vb = skip_spaces(eq + 3, end);
				const char *ve = end;
				while (ve > vb && is_space(ve[-1]))
					--ve;
				out.emplace_back(std::string(nb, ne), std::string(vb, ve));
			}
		}
		b = end < e ? end + 1 : e;
	}
}

/* Finds the bindings suffix after the name, skipping bracketed parameter lists. */
void find_bindings(const char *p, const char *e, bindings &out)
{
	while (p < e) {
		char c = *p;
		if (c == '(' || c == '{') {
			const char *q = skip_group(p, e);
			if (!q)
				return;
			p = q;
		} else if (c == '[') {
			const char *q = skip_group(p, e);
			if (!q)
				return;
			parse_bindings(p + 1, q - 1, out);
			p = q;
		} else {
			++p;
		}
	}
}

/* Replaces template parameter names inside <...> with their bound values. */
std::string substitute(const std::string &t, const bindings &bs)
{
	std::string out;
	int depth = 0;
	for (size_t i = 0; i < t.size();) {
		char c = t[i];
		if (c == '<')
			++depth;
		else if (c == '>' && depth > 0)
			--depth;
		if (depth > 0 && is_ident(c)) {
			size_t j = i;
			while (j < t.size() && is_ident(t[j]))
				++j;
			std::string w = t.substr(i, j - i);
			const std::string *v = nullptr;
			if (i == 0 || t[i - 1] != ':') {
				for (const auto &b : bs) {
					if (b.first == w) {
						v = &b.second;
						break;
					}
				}
			}
			out += v ? *v : w;
			i = j;
			continue;
		}
		out += c;
		++i;
	}
	return out;
}

/* Clang's mangling of a closure type with internal linkage: "$_0", "$_12". */
bool is_clang_closure(const std::string &t)
{
	if (t.size() < 3 || t[0] != '$' || t[1] != '_')
		return false;
	for (size_t i = 2; i < t.size(); ++i)
		if (t[i] < '0' || t[i] > '9')
			return false;
	return true;
}

/* A part without its template arguments, as pprof shows C++ names:
 * "Foo<int, char>" -> "Foo". (Operators are kept whole: "operator<".) */
std::string without_templates(const std::string &t)
{
	std::string out;
	const char *p = t.data(), *e = t.data() + t.size();
	while (p < e) {
		if (*p == '<') {
			const char *q = skip_group(p, e);
			if (q) {
				p = q;
				continue;
			}
		}
		out += *p++;
	}
	while (!out.empty() && is_space(out.back()))
		out.pop_back();
	return out;
}

/* comps[i] is a lambda's closure type and comps[i + 1] its operator(): the pair is
 * shown as one "<lambda>". */
bool closure_call(const std::vector<component> &comps, size_t i)
{
	const component &c = comps[i];
	return (c.lambda || c.anon_class || is_clang_closure(c.text)) && i + 1 < comps.size() &&
	       comps[i + 1].is_operator && comps[i + 1].text.compare(0, 10, "operator()") == 0;
}

std::string render(const std::vector<component> &comps)
{
	std::string out;
	for (size_t i = 0; i < comps.size(); ++i) {
		const component &c = comps[i];
		if (!out.empty())
			out += "::";
		if (closure_call(comps, i)) {
			out += "<lambda>";
			++i;
			continue;
		}
		if (c.lambda)
			out += "<lambda>";
		else if (c.is_operator)
			squeeze_append(out, c.text);
		else
			squeeze_append(out, without_templates(c.text));
	}
	return out;
}

/* The full name: every part with its template arguments (class template parameters
 * substituted), blanks where C++ puts them ("S<long int>::conv"). */
std::string render_full(const std::vector<component> &comps, const bindings &bs)
{
	std::string out;
	for (size_t i = 0; i < comps.size(); ++i) {
		const component &c = comps[i];
		if (!out.empty())
			out += "::";
		if (closure_call(comps, i)) {
			out += "<lambda>";
			++i;
			continue;
		}
		std::string t = !c.is_operator && !bs.empty() ? substitute(c.text, bs) : c.text;
		out += collapse_spaces(t.data(), t.data() + t.size());
	}
	return out;
}

/* A declaration ("void f(int)") or a qualified name ("ns::Foo<int>::bar", as debug
 * info's names are put together): something to parse, not a plain name. */
bool qualified(const char *b, const char *e)
{
	return memchr(b, '(', e - b) || memchr(b, '<', e - b) || memmem(b, e - b, "::", 2);
}

bool has_space(const std::string &s)
{
	for (char c : s)
		if (is_space(c))
			return true;
	return false;
}

} /* namespace */

std::string cxx_function_name(const char *pretty)
{
	if (!pretty)
		return std::string();
	const char *b = pretty;
	const char *e = b + strlen(b);
	if (!qualified(b, e))
		return fallback(b, e);

	std::vector<component> comps;
	const char *rest = e;
	if (!parse_name(b, e, comps, &rest))
		return fallback(b, e);
	std::string out = render(comps);
	if (out.empty() || has_space(out))
		return fallback(b, e);
	/* One spelling for the anonymous namespace, whoever printed it: GCC's. */
	static const char clang_anon[] = "(anonymous_namespace)";
	for (size_t at; (at = out.find(clang_anon)) != std::string::npos;)
		out.replace(at, sizeof(clang_anon) - 1, "{anonymous}");
	return out;
}

std::string cxx_full_name(const char *pretty)
{
	if (!pretty)
		return std::string();
	const char *b = pretty;
	const char *e = b + strlen(b);
	std::vector<component> comps;
	const char *rest = e;
	if (!qualified(b, e) || !parse_name(b, e, comps, &rest))
		return collapse_spaces(b, e);
	bindings bs;
	find_bindings(rest, e, bs);
	std::string out = render_full(comps, bs);
	if (out.empty())
		return collapse_spaces(b, e);
	static const char clang_anon[] = "(anonymous namespace)";
	for (size_t at; (at = out.find(clang_anon)) != std::string::npos;)
		out.replace(at, sizeof(clang_anon) - 1, "{anonymous}");
	return out;
}

namespace {

/* symbol demangled and given to name(), when it is a C++ one; else other(symbol). */
std::string demangled(const char *symbol, std::string (*name)(const char *),
		      std::string (*other)(const char *, const char *))
{
	if (!symbol)
		return std::string();
	if (symbol[0] == '_' && symbol[1] == 'Z') {
		int status = -1;
		char *d = abi::__cxa_demangle(symbol, nullptr, nullptr, &status);
		if (d && status == 0) {
			std::string out = name(d);
			free(d);
			return out;
		}
		free(d);
	}
	return other(symbol, symbol + strlen(symbol));
}

} /* namespace */

std::string demangled_full_name(const char *symbol)
{
	return demangled(symbol, cxx_full_name, collapse_spaces);
}

std::string demangled_function_name(const char *symbol)
{
	return demangled(symbol, cxx_function_name, fallback);
}

} /* namespace allocinfo */
