// SPDX-License-Identifier: MIT
// C++98, pedantic, through allocinfo-c++.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

int use();
int use()
{
	std::vector<std::string> v(2, "x");
	void *p = std::malloc(10);
	char *s = strdup("x");
	std::free(p);
	free(s);
	return static_cast<int>(v.size());
}
