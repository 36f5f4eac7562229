# SPDX-License-Identifier: MIT
# Documentation and man pages.
