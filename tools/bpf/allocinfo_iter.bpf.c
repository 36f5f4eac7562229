/* SPDX-License-Identifier: MIT */
/*
 * The report of one process, rendered in the kernel: a BPF iterator that prints the
 * kernel's /proc/allocinfo format (version 2.0) from the process's BPF store. Each
 * instrumented process loads its own copy at start-up, bound to its `counters` and
 * `tags` maps, and pins it as /sys/fs/bpf/allocinfo/<pid>/allocinfo.
 *
 * Rows follow the readers' rules (snapshot_rows in lib/reader/store_reader.cpp): static
 * tags are listed even at 0 0, dynamic and overflow tags only while nonzero,
 * unloaded tags only while nonzero and with " unloaded:yes"; the " via:" and
 * " allocator:" tokens when the tag has them; negative sums (a read
 * racing frees) print as 0. One row per tag, in slot order.
 *
 * Driven by the kernel-symbol iterator (iter/ksym) rather than iter/bpf_map_elem:
 * hardened kernels refuse programs for iterators that hand out map memory
 * (bpf_map_elem, sockmap, sk_storage) with EPERM, and one iterator object may print
 * no more than the 32 KiB seq_file buffer, so a whole report cannot be one object.
 * kallsyms has many more entries than a store has tag slots: object number n prints
 * slot n, and the remaining objects print nothing.
 *
 * Kept cheap to load inside every profiled process: no CO-RE relocations
 * (BPF_NO_PRESERVE_ACCESS_INDEX; the only kernel structures read are bpf_iter_meta
 * and the iterator context, whose layout is stable), and a section name of its own,
 * "allocinfo_iter", whose loader supplies the BTF id of bpf_iter_ksym itself
 * instead of having libbpf parse all of the kernel's BTF (lib/store/store_bpf.cpp).
 *
 * The program is declared "Dual MIT/GPL": bpf_seq_printf is a GPL-only helper.
 */
#include "vmlinux.h"

#include <bpf/bpf_helpers.h>

#include "store_bpf_format.h"

/* Placeholders: the loader replaces both with the process's maps (reuse_fd). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct allocinfo_counter);
	__uint(max_entries, 1);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct allocinfo_bpf_tag);
	__uint(max_entries, 1);
} tags SEC(".maps");

/* Set by the loader before loading. */
const volatile __u32 nr_cpus = 1;
const volatile __u32 tag_capacity = 1;

struct tag_sum {
	__u32 slot;
	__s64 bytes;
	__s64 calls;
};

static long add_cpu(__u32 cpu, void *data)
{
	struct tag_sum *s = data;
	__u32 key = cpu * tag_capacity + s->slot;
	struct allocinfo_counter *c = bpf_map_lookup_elem(&counters, &key);

	if (c) {
		s->bytes += c->bytes;
		s->calls += c->calls;
	}
	return 0;
}

SEC("allocinfo_iter")
int allocinfo_report(struct bpf_iter__ksym *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	__u64 n = ctx->meta->seq_num;
	struct tag_sum s = {};
	struct allocinfo_bpf_tag *t;
	__u32 slot;

	if (n == 0)
		BPF_SEQ_PRINTF(seq, "allocinfo - version: 2.0\n#     <size>  <calls> <tag info>\n");
	if (n >= tag_capacity)
		return 0;
	slot = (__u32)n;
	t = bpf_map_lookup_elem(&tags, &slot);
	if (!t || !(t->flags & ALLOCINFO_TAGF_USED))
		return 0;

	s.slot = slot;
	bpf_loop(nr_cpus, add_cpu, &s, 0);
	if (s.bytes == 0 && s.calls == 0 &&
	    (t->flags & (ALLOCINFO_TAGF_UNLOADED | ALLOCINFO_TAGF_DYNAMIC | ALLOCINFO_TAGF_OVERFLOW)))
		return 0;
	if (s.bytes < 0)
		s.bytes = 0;
	if (s.calls < 0)
		s.calls = 0;
	BPF_SEQ_PRINTF(seq, "%12lld %8llu %s:%u [%s] func:%s%s%s%s%s%s \n", s.bytes, s.calls,
		       t->file, t->line, t->module, t->func, t->via[0] ? " via:" : "", t->via,
		       t->allocator[0] ? " allocator:" : "", t->allocator,
		       (t->flags & ALLOCINFO_TAGF_UNLOADED) ? " unloaded:yes" : "");
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
