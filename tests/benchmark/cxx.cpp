/* SPDX-License-Identifier: MIT */
/*
 * A C++ workload: each round fills a std::map<std::string, std::vector<int>>, a
 * std::vector of std::shared_ptr objects and an std::unordered_map, reads them and
 * destroys them. Every allocation goes through operator new, untagged: the library
 * charges it to its caller's return address. Usage: cxx ROUNDS.
 */
#include "bench.h"

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

enum { KEYS = 10000, OBJECTS = 20000 };

uint32_t rng = 2463534242u;

uint32_t next_random()
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng;
}

struct shape {
	std::string name;
	std::vector<double> points;
	explicit shape(std::string n) : name(std::move(n)) {}
};

unsigned long round_trip()
{
	unsigned long check = 0;
	{
		std::map<std::string, std::vector<int>> index;
		for (int i = 0; i < KEYS; i++) {
			std::string key = "customer/" + std::to_string(next_random() % (KEYS * 2)) +
					  "/orders";
			auto &v = index[key];
			for (int k = 0; k < 1 + (int)(next_random() % 8); k++)
				v.push_back(i + k);
		}
		for (const auto &kv : index)
			check += kv.first.size() + kv.second.size();
	}
	{
		std::vector<std::shared_ptr<shape>> shapes;
		for (int i = 0; i < OBJECTS; i++) {
			auto s = std::make_shared<shape>("shape-with-a-long-name-" + std::to_string(i));
			s->points.resize(1 + next_random() % 12, 1.0);
			shapes.push_back(s);
			if (i % 3 == 0)
				shapes.push_back(std::move(s));	/* shared twice */
		}
		for (const auto &s : shapes)
			check += s->points.size();
	}
	{
		std::unordered_map<int, std::string> names;
		for (int i = 0; i < KEYS; i++)
			names.emplace((int)next_random(), std::string(20 + next_random() % 40, 'x'));
		check += names.size();
	}
	return check;
}

} /* namespace */

int main(int argc, char **argv)
{
	unsigned long rounds = bench_arg(argc, argv, 1, 20);
	unsigned long check = round_trip();	/* warm */
	bench_mark m = bench_now();
	for (unsigned long r = 0; r < rounds; r++)
		check += round_trip();
	bench_report(m, rounds);
	return check == 42 ? 1 : 0;
}
