// SPDX-License-Identifier: MIT
/*
 * Runs the fuzz target without libFuzzer, for `make check`: every file of the seed
 * corpus (or of the files and directories given), and for each one its
 * truncations and a few byte overwrites in its first 512 bytes, where the header
 * and the tag slots are.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace {

constexpr size_t INPUT_LIMIT = 1 << 20;
unsigned long runs;

void run(const std::vector<uint8_t> &in)
{
	/* A copy of exactly the input's size, so that ASan sees any overread. */
	uint8_t *p = static_cast<uint8_t *>(malloc(in.size() ? in.size() : 1));
	if (!p)
		abort();
	if (!in.empty())
		memcpy(p, in.data(), in.size());
	LLVMFuzzerTestOneInput(p, in.size());
	free(p);
	runs++;
}

bool replay_file(const std::string &path)
{
	FILE *f = fopen(path.c_str(), "rb");
	if (!f) {
		perror(path.c_str());
		return false;
	}
	std::vector<uint8_t> in(INPUT_LIMIT);
	size_t n = fread(in.data(), 1, in.size(), f);
	fclose(f);
	in.resize(n);

	run(in);
	/* Every cut in the header and first slots, then every 8th byte. */
	for (size_t len = 0; len < in.size(); len += len < 512 ? 1 : 8)
		run(std::vector<uint8_t>(in.begin(), in.begin() + (long)len));
	static const uint8_t values[] = {0x00, 0x80, 0xff};
	for (size_t off = 0; off < in.size() && off < 512; off++)
		for (uint8_t v : values) {
			std::vector<uint8_t> m(in);
			m[off] = v;
			run(m);
		}
	return true;
}

bool replay(const std::string &path)
{
	struct stat st;
	if (stat(path.c_str(), &st) != 0) {
		perror(path.c_str());
		return false;
	}
	if (!S_ISDIR(st.st_mode))
		return replay_file(path);
	DIR *d = opendir(path.c_str());
	if (!d) {
		perror(path.c_str());
		return false;
	}
	std::vector<std::string> names;
	while (struct dirent *de = readdir(d))
		if (de->d_name[0] != '.')
			names.push_back(path + "/" + de->d_name);
	closedir(d);
	bool ok = !names.empty();
	for (const std::string &n : names)
		ok = replay_file(n) && ok;
	return ok;
}

} /* namespace */

int main(int argc, char **argv)
{
	std::vector<std::string> paths;
	for (int i = 1; i < argc; i++)
		paths.push_back(argv[i]);
	if (paths.empty()) {
		const char *src = getenv("top_srcdir");
		if (!src) {
			fprintf(stderr, "usage: fuzz_replay FILE|DIR... (or set top_srcdir)\n");
			return 2;
		}
		paths.push_back(std::string(src) + "/tests/fuzz/corpus");
	}
	bool ok = true;
	for (const std::string &p : paths)
		ok = replay(p) && ok;
	printf("fuzz_replay: %lu inputs\n", runs);
	return ok ? 0 : 1;
}
