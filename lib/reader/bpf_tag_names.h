/* SPDX-License-Identifier: MIT */
/*
 * Naming a BPF store's caller tags for its report iterator. A process writes its
 * caller tags into its `tags` map unnamed ("??:0 [module] func:0xADDR"): naming one
 * means reading debug information, which a profiler must not do inside the
 * program's malloc. A reader that has named them for its own report writes the
 * names into the map, so that `cat /sys/fs/bpf/allocinfo/<pid>/allocinfo` prints
 * the lines `allocinfo -p PID` prints.
 *
 * Readers treat stores as hostile, and a reader may be root: it writes only into the
 * maps of its own user's processes (the pin directory is owned by the reader's
 * effective uid). Then nothing it writes is something that user could not write,
 * and nothing it names comes from a file that user could not read. It opens the pin
 * as any program of that user would, checks that it is a tags map of the store's
 * capacity, and replaces an entry only while it is still the unnamed form of that
 * very tag (same slot, module and address), so a slot the process reused meanwhile
 * keeps its own entry.
 */
#ifndef ALLOCINFO_BPF_TAG_NAMES_H
#define ALLOCINFO_BPF_TAG_NAMES_H

#include "store_reader.h"

namespace allocinfo {

class symbolizer;

/* Writes the names sym gives the listed caller tags of snapshot s (a BPF store,
 * header backend 1; others are left alone) into its tags map. Returns how many
 * entries were written; failures are silent (the iterator keeps the unnamed form). */
int write_bpf_tag_names(const store_snapshot &s, symbolizer &sym);

} /* namespace allocinfo */

#endif
