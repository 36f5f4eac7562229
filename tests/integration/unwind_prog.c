/* SPDX-License-Identifier: MIT */
/*
 * A C program's walks out of wrappers: the C library's stdio (fopen's FILE, the
 * buffer of the first fprintf), walked from the unwind tables by the library itself,
 * with libgcc_s never loaded; then a wrapper of the program's own whose frame is
 * described by a DWARF expression, which only libgcc's unwinder follows (loaded
 * then). Prints the lines of the calls and whether libgcc_s was loaded before and
 * after, then its report.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* expr_xmalloc(n): malloc(n), in a frame whose CFA is given as DW_OP_breg7 (rsp) + 16
 * (DW_CFA_def_cfa_expression) rather than as rsp + 16. */
void *expr_xmalloc(size_t n);
__asm__(".text\n"
	".globl expr_xmalloc\n"
	".hidden expr_xmalloc\n"
	".type expr_xmalloc, @function\n"
	"expr_xmalloc:\n"
	".cfi_startproc\n"
	"sub $8, %rsp\n"
	".cfi_escape 0x0f, 0x02, 0x77, 0x10\n"
	"call malloc@PLT\n"
	"add $8, %rsp\n"
	".cfi_def_cfa %rsp, 8\n"
	"ret\n"
	".cfi_endproc\n"
	".size expr_xmalloc, .-expr_xmalloc\n");

static int libgcc_s_loaded(void)
{
	void *h = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (h)
		dlclose(h);
	return h != NULL;
}

int main(void)
{
	int l_fopen = __LINE__ + 1;
	FILE *f = fopen("/dev/null", "w");
	if (!f)
		return 1;
	int l_fprintf = __LINE__ + 1;
	fprintf(f, "the buffer\n");
	int before = libgcc_s_loaded();
	int l_expr = __LINE__ + 1;
	void *p = expr_xmalloc(300);
	int after = libgcc_s_loaded();
	printf("lines fopen=%d fprintf=%d expr=%d libgcc_s before=%d after=%d\n", l_fopen,
	       l_fprintf, l_expr, before, after);
	fflush(stdout);
	ssize_t (*print)(int) = (ssize_t (*)(int))dlsym(RTLD_DEFAULT, "allocinfo_print");
	if (print)
		print(STDOUT_FILENO);
	free(p);
	fclose(f);
	return 0;
}
