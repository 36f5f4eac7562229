/* SPDX-License-Identifier: MIT */
/* Summing tags into report rows through interned names (see site_table.h). */
#include "site_table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <functional>

#include "cxxname.h"
#include "saturating.h"

namespace allocinfo {

namespace {

size_t mix(size_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h;
}

uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

} /* namespace */

uint64_t naming_budget_ms()
{
	static const uint64_t budget = [] {
		const char *v = getenv("ALLOCINFO_NAMING_BUDGET_MS");
		if (!v)
			return NAMING_BUDGET_MS;
		char *end;
		errno = 0;
		unsigned long long ms = strtoull(v, &end, 10);
		if (errno || end == v || *end || *v == '-' || *v == '+' || ms < 1 ||
		    ms > 3600000) {
			fprintf(stderr, "allocinfo: ALLOCINFO_NAMING_BUDGET_MS='%.64s' is not a "
				"number of milliseconds from 1 to 3600000; using %llu\n", v,
				(unsigned long long)NAMING_BUDGET_MS);
			return NAMING_BUDGET_MS;
		}
		return (uint64_t)ms;
	}();
	return budget;
}

std::string naming_budget_reason(size_t unnamed)
{
	return "naming its caller tags took over " + std::to_string(naming_budget_ms()) +
	       " ms: " + std::to_string(unnamed) + " shown unnamed";
}

bool site_table::raw_key::operator==(const raw_key &o) const
{
	return unloaded == o.unloaded && module == o.module && addr == o.addr &&
	       owner == o.owner && pid == o.pid && via == o.via && allocator == o.allocator;
}

bool site_table::row_key::operator==(const row_key &o) const
{
	return module == o.module && file == o.file && func == o.func && line == o.line &&
	       via == o.via && allocator == o.allocator && unloaded == o.unloaded &&
	       user == o.user && pid == o.pid;
}

size_t site_table::key_hash::operator()(const raw_key &k) const
{
	size_t h = mix(k.unloaded, k.module);
	h = mix(h, k.addr);
	h = mix(h, k.owner);
	h = mix(h, (uint64_t)k.via << 32 | k.allocator);
	return mix(h, (uint32_t)k.pid);
}

size_t site_table::key_hash::operator()(const row_key &k) const
{
	size_t h = mix(k.module, k.file);
	h = mix(h, k.func);
	h = mix(h, k.line);
	h = mix(h, (uint64_t)k.via << 32 | k.allocator);
	h = mix(h, k.unloaded);
	h = mix(h, k.user);
	return mix(h, (uint32_t)k.pid);
}

site_table::site_table(symbolizer *sym, bool keep_pid) : sym_(sym), keep_pid_(keep_pid)
{
	names_.emplace_back();	/* id 0: the empty name */
	name_ids_.emplace(names_.back(), 0);
}

uint32_t site_table::intern(std::string_view s)
{
	auto it = name_ids_.find(s);
	if (it != name_ids_.end())
		return it->second;
	uint32_t id = (uint32_t)names_.size();
	names_.emplace_back(s);
	name_ids_.emplace(names_.back(), id);
	return id;
}

/* A name of the snapshot being added: equal addresses in its strings are equal
 * names (the length is checked too, for views made by hand). */
uint32_t site_table::name_at(std::string_view s, unsigned field)
{
	if (s.empty())
		return 0;
	last_name &l = last_[field];
	if (l.p == s.data() && names_[l.id].size() == s.size())
		return l.id;
	auto it = by_address_.find(s.data());
	uint32_t id;
	if (it != by_address_.end() && names_[it->second].size() == s.size()) {
		id = it->second;
	} else {
		id = intern(s);
		by_address_[s.data()] = id;
	}
	l.p = s.data();
	l.id = id;
	return id;
}

/* A C++ tag's function as the process recorded it (__PRETTY_FUNCTION__), tidied
 * once per name: the library does not tidy it inside the program. */
uint32_t site_table::cxx_named(uint32_t name)
{
	if (as_cxx_.size() <= name)
		as_cxx_.resize(names_.size(), NONE);
	if (as_cxx_[name] == NONE) {
		uint32_t id = intern(cxx_function_name(names_[name].c_str()));
		if (as_cxx_.size() <= name)
			as_cxx_.resize(names_.size(), NONE);
		as_cxx_[name] = id;
	}
	return as_cxx_[name];
}

/* The interned printed form of an interned name, made once per name. */
uint32_t site_table::printed(uint32_t name, as what)
{
	std::vector<uint32_t> &memo = what == as::module ? as_module_ :
				      what == as::file ? as_file_ : as_word_;
	if (memo.size() <= name)
		memo.resize(names_.size(), NONE);
	if (memo[name] == NONE) {
		const std::string &raw = names_[name];
		uint32_t id = intern(what == as::module ? printed_module(raw) :
				     what == as::file ? printed_file(raw) : printed_word(raw));
		memo[name] = id;	/* after intern(), which may grow names_ only */
	}
	return memo[name];
}

uint32_t site_table::row_for(const row_key &k)
{
	auto r = row_ids_.try_emplace(k, (uint32_t)rows_.size());
	if (r.second)
		rows_.push_back({k, 0, 0, 0, 0, std::string()});
	return r.first->second;
}

/* Whether the add() under way has spent its naming budget: the CPU time of this
 * thread, so that a loaded machine does not cut a legitimate store short, or ten
 * times as much wall time (for time spent waiting on files). */
bool site_table::out_of_time()
{
	return deadline_ns_ && (clock_ns(CLOCK_THREAD_CPUTIME_ID) > deadline_ns_ ||
				clock_ns(CLOCK_MONOTONIC) > wall_deadline_ns_);
}

/* The row a tag adds to; a site seen for the first time is given one. *keep is
 * false for a row that must not be remembered for the tag (named for want of time
 * in the unnamed form). */
uint32_t site_table::row_of(const tag_snapshot &t, int pid, bool *keep)
{
	*keep = true;
	bool unloaded = (t.flags & ALLOCINFO_TAGF_UNLOADED) != 0;
	uint32_t module = name_at(t.module_path, 0);
	uint32_t via = t.via.empty() ? 0 : printed(name_at(t.via, 3), as::word);
	uint32_t allocator = t.allocator.empty() ? 0 : printed(name_at(t.allocator, 4), as::word);
	if (!(t.flags & ALLOCINFO_TAGF_DYNAMIC)) {
		/* A static tag prints as its names do, each made printable once. */
		uint32_t file = name_at(t.file, 1), func = name_at(t.func, 2);
		if (t.flags & ALLOCINFO_TAGF_CXX)
			func = cxx_named(func);
		row_key rk = {printed(module, as::module), printed(file, as::file),
			      printed(func, as::word), t.line, via, allocator, unloaded, user_, pid};
		return row_for(rk);
	}

	/* A caller tag is named from its module and address, once per owner. */
	raw_key k = {unloaded, module, via, allocator, t.addr, owner_key_, pid};
	auto found = raw_rows_.find(k);
	if (found != raw_rows_.end())
		return found->second;
	site_row named;
	if (sym_ && out_of_time()) {
		name_tag(t, nullptr, named);
		*keep = false;
		unnamed_++;
	} else {
		name_tag(t, sym_, named, owner_);
	}
	row_key rk = {intern(named.module), intern(named.file), intern(named.func), named.line,
		      via, allocator, unloaded, user_, pid};
	uint32_t id = row_for(rk);
	if (!rows_[id].full && !named.full_func.empty())
		rows_[id].full = intern(named.full_func);
	if (*keep)
		raw_rows_.emplace(k, id);
	return id;
}

void site_table::add(const store_snapshot &s, const std::string &comm,
		     std::vector<uint32_t> *memo)
{
	/* Addresses are those of this snapshot's strings only. */
	by_address_.clear();
	for (last_name &l : last_)
		l = last_name();
	if (memo && memo->size() != s.tags.size())
		memo->assign(s.tags.size(), NONE);
	int pid = keep_pid_ ? s.pid : 0;
	owner_ = &s.owner;
	user_ = intern(s.owner.user);
	owner_key_ = intern(s.owner.key);
	unnamed_ = 0;
	deadline_ns_ = budget_ns_ ? clock_ns(CLOCK_THREAD_CPUTIME_ID) + budget_ns_ : 0;
	wall_deadline_ns_ = clock_ns(CLOCK_MONOTONIC) + 10 * budget_ns_;
	for (size_t i = 0; i < s.tags.size(); i++) {
		const tag_snapshot &t = s.tags[i];
		if (!tag_listed(t))
			continue;	/* and not named: an idle caller tag may never be */
		uint32_t id;
		bool keep;
		if (!memo) {
			id = row_of(t, pid, &keep);
		} else if ((id = (*memo)[i]) == NONE) {
			id = row_of(t, pid, &keep);
			if (keep)
				(*memo)[i] = id;
		}
		row &r = rows_[id];
		if (r.report != report_) {
			r.report = report_;
			r.bytes = r.calls = 0;
			r.comm.clear();
			reported_.push_back(id);
		}
		r.bytes = saturating_add(r.bytes, t.bytes);
		r.calls = saturating_add(r.calls, t.calls);
		if (keep_pid_ && r.comm.empty())
			r.comm = comm;
	}
}

void site_table::clear_sums()
{
	report_++;
	reported_.clear();
	raw_rows_.clear();
}

std::vector<site_row> site_table::rows() const
{
	/* merge_rows()'s order: module, file, line, func, via, allocator, loaded first,
	 * user, pid. Rows are
	 * distinct in these, so any sort gives the one order. */
	std::vector<uint32_t> order(reported_);
	std::sort(order.begin(), order.end(), [this](uint32_t x, uint32_t y) {
		const row_key &a = rows_[x].key, &b = rows_[y].key;
		int c;
		if (a.module != b.module && (c = names_[a.module].compare(names_[b.module])))
			return c < 0;
		if (a.file != b.file && (c = names_[a.file].compare(names_[b.file])))
			return c < 0;
		if (a.line != b.line)
			return a.line < b.line;
		if (a.func != b.func && (c = names_[a.func].compare(names_[b.func])))
			return c < 0;
		if (a.via != b.via && (c = names_[a.via].compare(names_[b.via])))
			return c < 0;
		if (a.allocator != b.allocator &&
		    (c = names_[a.allocator].compare(names_[b.allocator])))
			return c < 0;
		if (a.unloaded != b.unloaded)
			return b.unloaded;
		if (a.user != b.user && (c = names_[a.user].compare(names_[b.user])))
			return c < 0;
		return a.pid < b.pid;
	});

	std::vector<site_row> out(order.size());
	for (size_t i = 0; i < order.size(); i++) {
		const row &r = rows_[order[i]];
		site_row &o = out[i];
		o.module = names_[r.key.module];
		o.file = names_[r.key.file];
		o.line = r.key.line;
		o.func = names_[r.key.func];
		o.full_func = names_[r.full];
		o.via = names_[r.key.via];
		o.allocator = names_[r.key.allocator];
		o.bytes = r.bytes;
		o.calls = r.calls;
		o.unloaded = r.key.unloaded;
		o.user = names_[r.key.user];
		o.pid = r.key.pid;
		o.comm = r.comm;
	}
	return out;
}

} /* namespace allocinfo */
