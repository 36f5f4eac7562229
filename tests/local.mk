# SPDX-License-Identifier: MIT
# Tests: unit/ (CMocka, in `make check`), integration/ (real processes, in `make
# check`), regression/ (long torture runs: `make regtest`), benchmark/ (`make bench`).
