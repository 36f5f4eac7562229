// SPDX-License-Identifier: MIT
// The same program as C++ (known_wrappers_prog.c).
#include "known_wrappers_prog.c"
