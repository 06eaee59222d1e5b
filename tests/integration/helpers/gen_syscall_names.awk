# Turns the kernel's asm/unistd_64.h into a C table: cbox_syscall_names[nr] = "name".
BEGIN {
	print "/* Generated from asm/unistd_64.h by gen_syscall_names.awk; do not edit. */"
	print "#pragma once"
	print "static const char *const cbox_syscall_names[] = {"
}
$1 == "#define" && $2 ~ /^__NR_/ && $3 ~ /^[0-9]+$/ {
	printf "\t[%d] = \"%s\",\n", $3, substr($2, 6)
}
END { print "};" }
