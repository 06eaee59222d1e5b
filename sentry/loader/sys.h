#pragma once
/*
 * Raw x86_64 system calls and the few memory routines the freestanding loader needs. The loader
 * has no libc: it runs before the guest's own libc exists in the address space.
 */
#include <stddef.h>
#include <stdint.h>
#include <asm/unistd.h>

/* Return the raw kernel result: >= 0, or -errno. */
static inline long sys6(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
	                 : "=a"(ret)
	                 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
	                 : "rcx", "r11", "memory");
	return ret;
}

static inline long sys3(long n, long a, long b, long c)
{
	return sys6(n, a, b, c, 0, 0, 0);
}

/* mmap returns -4095..-1 on failure; anything else is an address. */
static inline int sys_failed(long rc)
{
	return (unsigned long)rc > -4096UL;
}

/* The compiler may emit calls to these for struct copies even with -ffreestanding. */
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);

/* Enter the program: rsp = sp, rdx = 0 (no atexit hook), every other register zeroed. */
__attribute__((noreturn)) void loader_jump(uintptr_t entry, uintptr_t *sp);
/* Called from _start with the initial stack pointer (argc, argv, envp, auxv). */
__attribute__((noreturn)) void loader_main(uintptr_t *sp);
