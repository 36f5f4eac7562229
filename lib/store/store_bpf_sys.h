/* SPDX-License-Identifier: MIT */
/*
 * The few bpf(2) commands the BPF store uses, as plain system calls: no library, no
 * allocation, usable from inside malloc and by readers built without libbpf.
 * Each returns what the system call returns (-1 with errno on failure).
 */
#ifndef ALLOCINFO_STORE_BPF_SYS_H
#define ALLOCINFO_STORE_BPF_SYS_H

#include <linux/bpf.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace allocinfo {
namespace bpfsys {

inline long call(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

inline int map_create(uint32_t type, const char *name, uint32_t key_size, uint32_t value_size,
		      uint32_t max_entries, uint32_t flags, int btf_fd, uint32_t key_type,
		      uint32_t value_type)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = key_size;
	a.value_size = value_size;
	a.max_entries = max_entries;
	a.map_flags = flags;
	strncpy(a.map_name, name, sizeof(a.map_name) - 1);
	if (btf_fd >= 0) {
		a.btf_fd = (uint32_t)btf_fd;
		a.btf_key_type_id = key_type;
		a.btf_value_type_id = value_type;
	}
	return (int)call(BPF_MAP_CREATE, &a);
}

inline int btf_load(const void *data, uint32_t size)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.btf = (uint64_t)(uintptr_t)data;
	a.btf_size = size;
	return (int)call(BPF_BTF_LOAD, &a);
}

inline int obj_pin(int fd, const char *path)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.bpf_fd = (uint32_t)fd;
	a.pathname = (uint64_t)(uintptr_t)path;
	return (int)call(BPF_OBJ_PIN, &a);
}

/* flags: 0, BPF_F_RDONLY or BPF_F_WRONLY. */
inline int obj_get(const char *path, uint32_t flags)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.pathname = (uint64_t)(uintptr_t)path;
	a.file_flags = flags;
	return (int)call(BPF_OBJ_GET, &a);
}

inline int map_info(int fd, struct bpf_map_info *info)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	memset(info, 0, sizeof(*info));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(*info);
	a.info.info = (uint64_t)(uintptr_t)info;
	return (int)call(BPF_OBJ_GET_INFO_BY_FD, &a);
}

inline int map_lookup(int fd, const void *key, void *value)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)key;
	a.value = (uint64_t)(uintptr_t)value;
	return (int)call(BPF_MAP_LOOKUP_ELEM, &a);
}

inline int map_update(int fd, const void *key, const void *value)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)key;
	a.value = (uint64_t)(uintptr_t)value;
	a.flags = BPF_ANY;
	return (int)call(BPF_MAP_UPDATE_ELEM, &a);
}

/* Copies up to *count entries of an array map, from key `first` on; *count is set
 * to how many were copied. 0, or -1 with errno (ENOENT: the map ended). */
inline int map_lookup_batch(int fd, uint32_t first, void *keys, void *values, uint32_t *count)
{
	union bpf_attr a;
	uint32_t prev = first - 1, out = 0;
	memset(&a, 0, sizeof(a));
	a.batch.in_batch = first ? (uint64_t)(uintptr_t)&prev : 0;	/* the key before */
	a.batch.out_batch = (uint64_t)(uintptr_t)&out;
	a.batch.keys = (uint64_t)(uintptr_t)keys;
	a.batch.values = (uint64_t)(uintptr_t)values;
	a.batch.count = *count;
	a.batch.map_fd = (uint32_t)fd;
	int rc = (int)call(BPF_MAP_LOOKUP_BATCH, &a);
	*count = a.batch.count;
	return rc;
}

inline int map_delete(int fd, const void *key)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)key;
	return (int)call(BPF_MAP_DELETE_ELEM, &a);
}

} /* namespace bpfsys */
} /* namespace allocinfo */

#endif /* ALLOCINFO_STORE_BPF_SYS_H */
