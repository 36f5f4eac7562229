/* SPDX-License-Identifier: MIT */
/*
 * Which live counted block of another process holds an address: its store says how
 * the process lays its blocks out and names the tags; its memory is read with
 * process_vm_readv() (the permission ptrace needs: same user, or root).
 */
#ifndef ALLOCINFO_BLOCK_LOOKUP_H
#define ALLOCINFO_BLOCK_LOOKUP_H

#include <stdint.h>

#include <string>

#include "report.h"
#include "store_reader.h"

namespace allocinfo {

class symbolizer;

struct block_owner {
	uint64_t start = 0;
	uint64_t size = 0;	/* bytes asked for */
	site_row site;		/* the call site, as the report names it */
};

/* True with the block found; false with why empty (not in a live counted block) or
 * saying what failed (the process's memory cannot be read). */
bool find_block_owner(int pid, const store_snapshot &snap, uint64_t addr, symbolizer *sym,
		      block_owner &out, std::string &why);

/* "0x...: 50 bytes into 100 bytes at 0x... from file:line [module] func:NAME
 * allocator:malloc", one line. */
std::string describe_block_owner(uint64_t addr, const block_owner &b);

} /* namespace allocinfo */

#endif
