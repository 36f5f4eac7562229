#!/bin/sh
# SPDX-License-Identifier: MIT
# Generates ./configure from configure.ac (needs autoconf, automake, libtool).
set -e
cd "$(dirname "$0")"
autoreconf --force --install --verbose
