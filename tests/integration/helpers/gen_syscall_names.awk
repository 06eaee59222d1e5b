# Turns the kernel's asm/unistd_64.h into a C table: cbox_syscall_names[nr] = "name".
# Syscalls newer than the installed headers (Debian 12's stop at 450) get their names from the
# list at the end, taken from the x86_64 syscall table of later kernels, so that a filter that
# allows one of them prints its name rather than its number.
BEGIN {
	print "/* Generated from asm/unistd_64.h by gen_syscall_names.awk; do not edit. */"
	print "#pragma once"
	print "static const char *const cbox_syscall_names[] = {"
}
$1 == "#define" && $2 ~ /^__NR_/ && $3 ~ /^[0-9]+$/ {
	printf "\t[%d] = \"%s\",\n", $3, substr($2, 6)
	seen[$3] = 1
}
END {
	n = split("451 cachestat 452 fchmodat2 453 map_shadow_stack 454 futex_wake 455 futex_wait " \
		"456 futex_requeue 457 statmount 458 listmount 459 lsm_get_self_attr " \
		"460 lsm_set_self_attr 461 lsm_list_modules 462 mseal 463 setxattrat 464 getxattrat " \
		"465 listxattrat 466 removexattrat 467 open_tree_attr 468 file_getattr " \
		"469 file_setattr", later, " ")
	for (i = 1; i < n; i += 2)
		if (!(later[i] in seen))
			printf "\t[%d] = \"%s\",\n", later[i], later[i + 1]
	print "};"
}
