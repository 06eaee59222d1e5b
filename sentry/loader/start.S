/* Entry and exit of the freestanding loader (x86_64). */
	.text
	.globl	_start
	.type	_start, @function
_start:
	xor	%ebp, %ebp
	mov	%rsp, %rdi		/* loader_main(initial sp) */
	and	$-16, %rsp
	call	loader_main
	ud2
	.size	_start, . - _start

/* void loader_jump(uintptr_t entry, uintptr_t *sp): the entry address is pushed just below the
 * initial stack and popped by ret, so no register has to carry it and all can be zeroed; the
 * program then starts with rsp == sp, exactly as the kernel would have started it. */
	.globl	loader_jump
	.type	loader_jump, @function
loader_jump:
	lea	-8(%rsi), %rsp
	mov	%rdi, (%rsp)
	xor	%eax, %eax
	xor	%ebx, %ebx
	xor	%ecx, %ecx
	xor	%edx, %edx
	xor	%esi, %esi
	xor	%edi, %edi
	xor	%ebp, %ebp
	xor	%r8d, %r8d
	xor	%r9d, %r9d
	xor	%r10d, %r10d
	xor	%r11d, %r11d
	xor	%r12d, %r12d
	xor	%r13d, %r13d
	xor	%r14d, %r14d
	xor	%r15d, %r15d
	cld
	ret
	.size	loader_jump, . - loader_jump

	.section .note.GNU-stack, "", @progbits
