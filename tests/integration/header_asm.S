/* SPDX-License-Identifier: MIT */
/* Assembly through allocinfo-cc: preprocessed, no C declarations. */
#define RESULT 42
	.text
	.globl	header_asm_answer
	.type	header_asm_answer, @function
header_asm_answer:
	movl	$RESULT, %eax
	ret
	.section .note.GNU-stack,"",@progbits
