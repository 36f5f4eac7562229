/* SPDX-License-Identifier: MIT */
/*
 * Reading BPF stores (store_bpf_format.h) exactly as shm stores: a store whose
 * header says backend 1 is read through a composite source, the file up to its
 * counters region and then the counters of the process's pinned `counters` map. And
 * the garbage collection of the pins of dead processes.
 *
 * Same rules as every reader: the maps are hostile input. The pins are opened
 * read-only and checked before use (map type, key and value sizes, entries, flags),
 * the `meta` map must name the header's pid, start time, CPUs and capacity, and the
 * counters are copied out of the map with BPF_MAP_LOOKUP_BATCH, as they are read.
 * Only the kernel's uapi headers are needed: this is built whether or not the build
 * has BPF support.
 */
#ifndef ALLOCINFO_STORE_BPF_READER_H
#define ALLOCINFO_STORE_BPF_READER_H

#include <memory>
#include <string>
#include <vector>

#include "store_reader.h"

namespace allocinfo {

/*
 * For the store file open at fd (read-only), written by process pid: a composite
 * source when the file is a BPF store, else nullptr with `why` empty (read the file
 * as it is). On an error, nullptr with `why` saying what is wrong. A store that
 * still holds another pid's header (a child just forked) gets zero counters, so the
 * caller sees that pid and decides. Fits set_store_source_factory() (store_scan.h).
 */
std::unique_ptr<store_source> open_bpf_store_source(int pid, const std::string &path, int fd,
						    std::string &why);

/*
 * Removes the pin directories under /sys/fs/bpf/allocinfo/ of processes that are
 * gone (no such pid, a zombie, or a pid reused: the start time in `meta` differs),
 * whatever store directory their store files are in. Appends each directory removed
 * to `removed`, and one line per failure to `problems`. A missing
 * /sys/fs/bpf/allocinfo is not a problem.
 */
void remove_stale_bpf_pins(std::vector<std::string> &removed, std::vector<std::string> &problems);

} /* namespace allocinfo */

#endif /* ALLOCINFO_STORE_BPF_READER_H */
