# SPDX-License-Identifier: MIT
# Documentation and man pages.
EXTRA_DIST += Documentation/user-guide.md Documentation/theory-of-operation.md \
	Documentation/identity.md \
	Documentation/performance.md Documentation/examples/demo.c
