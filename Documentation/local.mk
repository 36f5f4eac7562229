# SPDX-License-Identifier: MIT
# Documentation and man pages.
EXTRA_DIST += Documentation/user-guide.md Documentation/theory-of-operation.md \
	Documentation/identity.md \
	Documentation/performance.md Documentation/security.md \
	Documentation/examples/demo.c Documentation/real-world.md \
	Documentation/profiling.md

# The example callback libraries, for ALLOCINFO_CALLBACKS; built by make check and
# tried by tests/integration/callbacks.sh. Not linked with the library: they bind to
# the one the program has. Never instrumented by a sanitizer: callbacks may run inside
# its own thread start-up, as the allocation path does.
EXAMPLE_CB_CFLAGS = -std=gnu11 $(WARN_CFLAGS)
check_LTLIBRARIES += Documentation/examples/libcallbacks_log_large.la \
	Documentation/examples/libcallbacks_guard.la \
	Documentation/examples/libcallbacks_thread_stats.la
EXAMPLE_CB_LDFLAGS = -rpath /nowhere -avoid-version -module
Documentation_examples_libcallbacks_log_large_la_SOURCES = \
	Documentation/examples/callbacks_log_large.c
Documentation_examples_libcallbacks_log_large_la_CFLAGS = $(EXAMPLE_CB_CFLAGS)
Documentation_examples_libcallbacks_log_large_la_LDFLAGS = $(EXAMPLE_CB_LDFLAGS)
Documentation_examples_libcallbacks_log_large_la_LIBADD = $(DL_LIBS)
Documentation_examples_libcallbacks_guard_la_SOURCES = Documentation/examples/callbacks_guard.c
Documentation_examples_libcallbacks_guard_la_CFLAGS = $(EXAMPLE_CB_CFLAGS)
Documentation_examples_libcallbacks_guard_la_LDFLAGS = $(EXAMPLE_CB_LDFLAGS)
Documentation_examples_libcallbacks_thread_stats_la_SOURCES = \
	Documentation/examples/callbacks_thread_stats.c
Documentation_examples_libcallbacks_thread_stats_la_CFLAGS = $(EXAMPLE_CB_CFLAGS)
Documentation_examples_libcallbacks_thread_stats_la_LDFLAGS = $(EXAMPLE_CB_LDFLAGS)
Documentation_examples_libcallbacks_thread_stats_la_LIBADD = -lpthread
dist_man_MANS += Documentation/man/allocinfo_callbacks.3 \
	Documentation/man/allocinfo_pprof_profiler_start.3
dist_man_MANS += Documentation/man/allocinfo-cc.1 Documentation/man/allocinfo-c++.1
dist_man_MANS += Documentation/man/allocinfo_profiler.3
EXTRA_DIST += Documentation/sampling.md
EXTRA_DIST += Documentation/callbacks.md
