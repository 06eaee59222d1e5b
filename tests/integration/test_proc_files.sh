#!/bin/bash
# The files of /proc the sentry serves: each compared with the host's own file (same field names,
# same columns) and checked for the guest's view (pid 1, uid 0, a container root's capabilities,
# the sandbox's hostname and mounts); ps, top and python3 run on top of them.
. "$(dirname "$0")/lib.sh"
as_pid1 # the sentry's view of a program that is pid 1 (--no-init)
need_binaries

# Field names (the text before the first ':') of a "Key: value" file, one per line.
keys() {
	printf '%s\n' "$1" | cut -d: -f1 | tr -d ' \t'
}

# The host's files, read once.
HOST_STATUS_KEYS=$(keys "$(cat /proc/self/status)")
HOST_MEMINFO_KEYS=$(keys "$(cat /proc/meminfo)")
HOST_LIMITS_HEAD=$(head -n 1 /proc/self/limits)
HOST_STAT_FIELDS=$(awk '{ print NF }' /proc/self/stat)
NPROC=$(nproc)

t_pid_files() {
	sh_box 'exec busybox cat /proc/self/status'
	check "status field names are Linux's" "$HOST_STATUS_KEYS" "$(keys "$OUT")"
	check_match "status Pid 1" "^Pid:	1\$" "$OUT"
	check_match "status NSpid one level" "^NSpid:	1\$" "$OUT"
	check_match "status State R for itself" "^State:	R \\(running\\)\$" "$OUT"
	check_match "status Uid 0" "^Uid:	0	0	0	0\$" "$OUT"
	check_match "status Gid 0" "^Gid:	0	0	0	0\$" "$OUT"
	# Docker's default capabilities, of those the sentry emulates (runtime-shim/cbox_run.c)
	check_match "status CapEff: chown dac_override fowner fsetid kill setgid setuid" "^CapEff:	0{14}fb\$" "$OUT"
	check_match "status CapBnd: the same" "^CapBnd:	0{14}fb\$" "$OUT"
	# The guest's own flag, unset as in a fresh container (the host's is always set: the OCI
	# suite checks it on the host's /proc); PR_SET_NO_NEW_PRIVS sets it (compat: prctl.*).
	check_match "status NoNewPrivs" "^NoNewPrivs:	0\$" "$OUT"
	check_match "status Seccomp" "^Seccomp:	2\$" "$OUT"
	check_match "status TracerPid hidden" "^TracerPid:	0\$" "$OUT"
	check_match "status VmRSS" "^VmRSS:[[:space:]]+[1-9][0-9]* kB\$" "$OUT"

	sh_box 'exec busybox cat /proc/self/stat'
	check_match "stat of itself" "^1 \\((cat|busybox)\\) R 0 1 1 " "$OUT"
	check "stat has Linux's field count" "$HOST_STAT_FIELDS" "$(echo "$OUT" | awk '{ print NF }')"

	sh_box 'cd /proc/self && busybox cat statm; busybox head -n 1 maps; busybox head -n 1 limits
		busybox cat fdinfo/0 cgroup uid_map gid_map setgroups oom_score_adj loginuid; echo
		busybox readlink ns/net; busybox readlink root; busybox ls task; busybox ls fdinfo | busybox head -n 3'
	local l=()
	mapfile -t l <<<"$OUT"
	check_match "statm" "^[0-9]+( [0-9]+){6}\$" "${l[0]}"
	check_match "maps line" "^[0-9a-f]+-[0-9a-f]+ [r-][w-][x-][ps] [0-9a-f]{8} [0-9a-f]+:[0-9a-f]+ [0-9]+ " "${l[1]}"
	check "limits header is Linux's" "$HOST_LIMITS_HEAD" "${l[2]}"
	check_match "fdinfo pos" "^pos:	[0-9]+\$" "${l[3]}"
	check_match "fdinfo flags" "^flags:	0[0-7]+\$" "${l[4]}"
	check_match "fdinfo mnt_id" "^mnt_id:	[0-9]+\$" "${l[5]}"
	local rest
	rest=$(printf '%s\n' "${l[@]:6}")
	check_match "cgroup" "^0::/\$" "$rest"
	# every guest id is one (cbox/cred.h), as in a container without a user namespace
	check_match "uid_map maps every id" "^ +0 +0 +4294967295\$" "$rest"
	check_match "setgroups" "^allow\$" "$rest"
	check_match "oom_score_adj then loginuid" "^-?[0-9]+\$" "$rest"
	check_match "ns/net link" "^net:\\[[0-9]+\\]\$" "$rest"
	check_match "root link" "^/\$" "$rest"
	check_match "fdinfo lists 0" "^0\$" "$rest"

	# `; true`: busybox sh would exec its last command in place, and exec sets comm anew.
	sh_box 'echo -n foo > /proc/self/comm && busybox cat /proc/$$/comm; true'
	check "write own comm" "foo" "$OUT"

	sh_box 'echo 5 > /proc/self/oom_score_adj && busybox cat /proc/$$/oom_score_adj
		echo -1 > /proc/$$/oom_score_adj || echo refused'
	check "oom_score_adj raised, lowering refused" "5
refused" "$OUT"

	sh_box 'echo x > /proc/version || echo refused; echo x > /proc/self/status || echo refused'
	check "writes elsewhere refused" "refused
refused" "$OUT"
	check_match "with EACCES" "Permission denied" "$ERR"
}

# smaps, smaps_rollup and io (the host's files of the task), diskstats and partitions (the
# sandbox has no disk), and the loader's mapping, whose file is not in the guest's tree, shown as
# deleted in maps and smaps.
t_memory_io_files() {
	sh_box 'cd /proc/self && busybox head -n 1 smaps; busybox head -n 2 smaps_rollup
		busybox cut -d: -f1 io | busybox tr "\n" " "; echo
		busybox stat -c %a io; busybox cat /proc/partitions /proc/diskstats
		busybox grep -c "^Size:" smaps; busybox grep -c . maps
		busybox grep -c "^[0-9a-f]*-[0-9a-f]* .* /cbox-loader (deleted)$" maps
		busybox grep -c "/cbox-loader$" maps smaps
		echo "[$(busybox cat wchan)] [$(busybox cat task/*/wchan)]"'
	local l=()
	mapfile -t l <<<"$OUT"
	check_match "smaps: a mapping's line" "^[0-9a-f]+-[0-9a-f]+ [r-][w-][x-][ps] [0-9a-f]{8} " "${l[0]}"
	check_match "smaps_rollup: [rollup], then Rss" \
		"^[0-9a-f]+-[0-9a-f]+ ---p 00000000 00:00 0 +\[rollup\]
Rss: +[1-9][0-9]* kB\$" "$(printf '%s\n' "${l[@]:1:2}")"
	check "io: Linux's counters" "rchar wchar syscr syscw read_bytes write_bytes cancelled_write_bytes " "${l[3]}"
	check "io: mode 0400, as Linux" "400" "${l[4]}"
	check "partitions: the header and no disk; diskstats empty" "major minor  #blocks  name|" \
		"${l[5]}|${l[6]}"
	check "smaps: one Size line per line of maps" "${l[8]}" "${l[7]}"
	check_match "maps: the loader's mappings shown deleted" "^[1-9][0-9]*\$" "${l[9]}"
	check "  ... and none named as a file of the tree, in maps or smaps" "maps:0
smaps:0" "$(printf '%s\n' "${l[@]:10:2}")"
	# wchan: "0", as Linux shows a running task's (ps -l showed "?" for a missing file).
	check "wchan: 0, a thread's too" "[0] [0]" "${l[12]}"

	# Another user's: refused as maps is (PTRACE_MODE_READ), EACCES.
	sh_box 'busybox sleep 5 & p=$!; busybox su nobody -s /bin/sh -c \
		"for f in smaps smaps_rollup io maps; do busybox cat /proc/$p/\$f >/dev/null 2>&1 || echo no \$f; done"; kill $p'
	check "another user's smaps, smaps_rollup, io refused as maps" "no smaps
no smaps_rollup
no io
no maps" "$OUT"
}

# A process that exited and was not waited for yet is a zombie: /proc/PID stays, in state Z
# (ps: <defunct>), with no exe or cwd, until its parent's wait, as on Linux. (The sentry forgot it
# at its exit before: psutil's test_zombie_process found it gone.)
# (a zombie's memory files, opened by another user: t_zombie)
ZOMBIE_MEMORY='import errno, os, time
pid = os.fork()
if pid == 0:
    os._exit(0)
while open("/proc/%d/stat" % pid).read().split()[2] != "Z":
    time.sleep(0.02)
out = []
for f in ("environ", "auxv", "mem"):
    try:
        open("/proc/%d/%s" % (pid, f), "rb")
        out.append(f + " opened")
    except OSError as e:
        out.append(f + " " + errno.errorcode[e.errno])
print(" ".join(out))
os.waitpid(pid, 0)'

t_zombie() {
	box python3 -c 'import os, time
pid = os.fork()
if pid == 0:
    os._exit(3)
for _ in range(100):
    if open("/proc/%d/stat" % pid).read().split()[2] == "Z":
        break
    time.sleep(0.05)
print(open("/proc/%d/stat" % pid).read().split()[2], str(pid) in os.listdir("/proc"))
print(os.listdir("/proc/%d/task" % pid) == [str(pid)], os.listdir("/proc/%d/fd" % pid))
for f in ("exe", "cwd"):
    try:
        os.readlink("/proc/%d/%s" % (pid, f))
    except OSError as e:
        print(f, os.strerror(e.errno))
print([open("/proc/%d/%s" % (pid, f), "rb").read() for f in ("environ", "auxv", "mem")])
os.kill(pid, 0)
print(os.waitpid(pid, 0)[1] >> 8, os.path.exists("/proc/%d" % pid), str(pid) in os.listdir("/proc"))'
	check "a zombie: state Z, listed in /proc, its one thread, no fds, no exe or cwd, no memory, signalable" \
		"Z True
True []
exe No such file or directory
cwd No such file or directory
[b'', b'', b'']
3 False False" "$OUT"
	# Its memory files are empty (Linux 6.1's answer; 6.18 says ESRCH) and root's (a
	# task without memory is), so another user is refused them (psutil: AccessDenied). They
	# were EACCES even to root, and environ read the host's (EACCES) where auxv was empty.
	box setpriv --reuid=65534 --regid=65534 --clear-groups python3 -c "$ZOMBIE_MEMORY"
	check "a zombie's memory files are root's: another user gets EACCES" \
		"environ EACCES auxv EACCES mem EACCES" "$OUT"
}

# Right after a child's exec returns, its name is the program's in stat, status and comm, as
# Linux names it in the exec: the host names it after the loader's file until the loader renames
# it, and the sentry shows the exec's name meanwhile. (A parent reading it at once, as psutil's
# test_long_name does, saw "cbox-loader" in most runs under ptrace.)
t_exec_name() {
	box python3 -c 'import os, subprocess
names = set()
for _ in range(3):
    p = subprocess.Popen(["/bin/sleep", "1"])
    names.add(open("/proc/%d/stat" % p.pid).read().split()[1])
    names.add([l for l in open("/proc/%d/status" % p.pid) if l.startswith("Name:")][0].split()[1])
    names.add(open("/proc/%d/comm" % p.pid).read().strip())
    p.kill()
    p.wait()
print(sorted(names))'
	check "a child's name right after its exec: the program's" "['(sleep)', 'sleep']" "$OUT"
}

t_mounts() {
	sh_box 'busybox cat /proc/self/mounts; busybox cat /proc/mounts | busybox wc -l'
	check_match "mounts: rootfs" "^[^ ]+ / [^ ]+ r[ow],[^ ]* 0 0\$" "$OUT"
	# (as the gofer serves it: a setuid program runs with its caller's ids, no device opens)
	check_match "mounts: rootfs nosuid,nodev" "^[^ ]+ / [^ ]+ r[ow],nosuid,nodev,[^ ]* 0 0\$" "$OUT"
	check_match "mounts: /proc" "^proc /proc proc rw,[^ ]* 0 0\$" "$OUT"
	check_match "mounts: /tmp" "^tmpfs /tmp tmpfs rw,[^ ]* 0 0\$" "$OUT"
	check_match "mounts: /dev" " /dev " "$OUT"
	check "/proc/mounts is self/mounts" "$(($(printf '%s\n' "$OUT" | wc -l) - 1))" \
		"$(printf '%s\n' "$OUT" | tail -n 1)"

	box "$BB" cat /proc/self/mountinfo
	check_match "mountinfo format" "^[0-9]+ [0-9]+ [0-9]+:[0-9]+ / /proc [^ ]+ - proc proc rw\$" "$OUT"
	check "mountinfo: every line well-formed" "0" \
		"$(printf '%s\n' "$OUT" | grep -Evc '^[0-9]+ [0-9]+ [0-9]+:[0-9]+ / /[^ ]* [^ ]+ - [^ ]+ [^ ]+ r[ow]$')"
}

t_sys_files() {
	sh_box 'cd /proc && busybox cat meminfo > /tmp/m && busybox grep -c ^processor cpuinfo
		busybox cat loadavg cmdline sys/kernel/hostname sys/kernel/domainname \
			sys/kernel/osrelease sys/kernel/ostype sys/kernel/pid_max \
			sys/kernel/ngroups_max sys/kernel/cap_last_cap sys/kernel/overflowuid \
			sys/kernel/overflowgid sys/vm/overcommit_memory sys/fs/file-max sys/fs/nr_open \
			sys/kernel/random/uuid sys/kernel/random/uuid sys/kernel/random/boot_id \
			sys/kernel/random/boot_id
		busybox head -c 14 version; echo; busybox grep -c "	proc$" filesystems
		busybox cut -d: -f1 /tmp/m | busybox tr -d " "'
	local l=()
	mapfile -t l <<<"$OUT"
	check "cpuinfo processors" "$NPROC" "${l[0]}"
	check_match "loadavg" "^[0-9.]+ [0-9.]+ [0-9.]+ [0-9]+/[0-9]+ [0-9]+\$" "${l[1]}"
	check "cmdline hides the host's" "BOOT_IMAGE=cbox ro" "${l[2]}"
	check "hostname" "cbox" "${l[3]}"
	check "domainname" "(none)" "${l[4]}"
	check "osrelease" "$(uname -r)" "${l[5]}"
	check "ostype" "Linux" "${l[6]}"
	# pid_max belongs to the pid namespace (Linux 6.14+): the sandbox's own, not the host's.
	check_match "pid_max" "^[0-9]+\$" "${l[7]}"
	check "ngroups_max" "$(cat /proc/sys/kernel/ngroups_max)" "${l[8]}"
	check "cap_last_cap" "$(cat /proc/sys/kernel/cap_last_cap)" "${l[9]}"
	check "overflowuid" "$(cat /proc/sys/kernel/overflowuid)" "${l[10]}"
	check "overflowgid" "$(cat /proc/sys/kernel/overflowgid)" "${l[11]}"
	check "overcommit_memory" "$(cat /proc/sys/vm/overcommit_memory)" "${l[12]}"
	check "file-max" "$(cat /proc/sys/fs/file-max)" "${l[13]}"
	check "nr_open" "$(cat /proc/sys/fs/nr_open)" "${l[14]}"
	local uuid='^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$'
	check_match "random/uuid" "$uuid" "${l[15]}"
	check_match "random/uuid fresh each read" "true" "$([ "${l[15]}" != "${l[16]}" ] && echo true)"
	check_match "boot_id" "$uuid" "${l[17]}"
	check "boot_id fixed" "${l[17]}" "${l[18]}"
	check "version" "Linux version " "${l[19]}"
	check "filesystems lists proc" "1" "${l[20]}"
	check "meminfo field names are Linux's" "$HOST_MEMINFO_KEYS" "$(printf '%s\n' "${l[@]:21}")"
}

# /sys (sentry/fs_sys.c): the machine's CPUs and huge pages as the host has them, the sandbox's
# cgroup as a container's cgroup v2 (here without limits: every one "max", and no usage files),
# on a read-only mount of its own.
t_sysfs() {
	sh_box 'cd /sys/devices/system/cpu && busybox cat online possible present
		busybox ls | busybox grep -c "^cpu[0-9]"; busybox ls -d cpu0/
		busybox cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/hpage_pmd_size
		busybox stat -f -c %t /sys /sys/fs/cgroup
		cd /sys/fs/cgroup && busybox cat memory.max memory.swap.max cpu.max pids.max cpu.weight
		busybox test -e memory.current -o -e cpu.stat -o -e memory.stat || echo no usage
		while read -r p; do echo "$p"; done <cgroup.procs
		busybox grep " /sys" /proc/self/mountinfo | busybox cut -d" " -f5,9
		busybox awk "NR > 1 && \$2 != 0" /proc/cgroups | busybox wc -l
		busybox grep -c "^memory	0	1	1$" /proc/cgroups
		busybox touch /sys/x 2>&1; echo max > memory.max'
	local l=()
	mapfile -t l <<<"$OUT"
	check "cpu online, possible, present: the host's" \
		"$(cat /sys/devices/system/cpu/online /sys/devices/system/cpu/possible /sys/devices/system/cpu/present)" \
		"$(printf '%s\n' "${l[@]:0:3}")"
	check "a cpuN directory for each present CPU" \
		"$(find /sys/devices/system/cpu -maxdepth 1 -name 'cpu[0-9]*' | wc -l)" "${l[3]}"
	check "cpu0/" "cpu0/" "${l[4]}"
	check "transparent_hugepage: the host's" \
		"$(cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/hpage_pmd_size)" \
		"$(printf '%s\n' "${l[@]:5:2}")"
	check "statfs: SYSFS_MAGIC, and CGROUP2_SUPER_MAGIC on /sys/fs/cgroup" "62656572
63677270" "$(printf '%s\n' "${l[@]:7:2}")"
	check "no limit: memory.max, memory.swap.max, cpu.max, pids.max, cpu.weight" "max
max
max 100000
max
100" "$(printf '%s\n' "${l[@]:9:5}")"
	check "  ... and no usage files without a cgroup" "no usage" "${l[14]}"
	check "cgroup.procs: the guest's shell (pid 1; read by the shell itself)" "1" "${l[15]}"
	check "mountinfo: sysfs on /sys, cgroup2 on /sys/fs/cgroup" "/sys sysfs
/sys/fs/cgroup cgroup2" "$(printf '%s\n' "${l[@]:16:2}")"
	check "/proc/cgroups: every controller on the v2 hierarchy" "0" "${l[18]}"
	check "  ... memory among them, enabled" "1" "${l[19]}"
	check_match "/sys is read-only" "Read-only file system" "${l[20]}"
	check_match "  ... and so is the cgroup (a limit cannot be lifted)" "Read-only file system" "$ERR"
}

t_tools() {
	sh_box 'busybox sleep 2 & busybox ps -o pid,comm; kill %1'
	check_match "ps lists the shell as pid 1" "^ +1 +(sh|busybox)\$" "$OUT"
	check_match "ps lists the guest's processes only" "^[2-4]\$" \
		"$(printf '%s\n' "$OUT" | grep -Ec '^ +[0-9]+ ')"

	box "$BB" top -b -n1
	check_status "top -b -n1 runs" 0
	check_match "top lists itself" "^ +1 +0 +root +R .*top -b -n1" "$OUT"
	check_match "top reads meminfo" "^Mem: [0-9]+K used" "$OUT"

	box vmstat 1 1
	check_status "vmstat runs (/proc/vmstat, the machine's counters as meminfo and stat)" 0
	check "  ... and prints its header and one line" 3 "$(printf '%s\n' "$OUT" | grep -c .)"
	sh_box 'busybox cut -d" " -f1 /proc/vmstat'
	check "/proc/vmstat: the host's counter names" "$(cut -d' ' -f1 /proc/vmstat)" "$OUT"

	box python3 -c 'import os
print(os.cpu_count())
fd = os.open("/proc/self/ns/net", os.O_RDONLY)
print(os.fstat(fd).st_ino == int(os.readlink("/proc/self/ns/net")[5:-1]))'
	check "python3 cpu_count, ns/net opens" "$NPROC
True" "$OUT"
}

# block/, dev/{block,char}/, class/: there and empty, as gVisor's /sys has them: lsblk lists no
# device instead of failing on a missing /sys/dev/block.
t_sysfs_empty() {
	box lsblk -J
	check_status "lsblk runs (/sys/dev/block and /sys/block, empty)" 0
	check "  ... and lists no block device" '{ "blockdevices": [ ] }' "$(printf '%s' "$OUT" | tr -s ' \n' ' ')"
	sh_box 'busybox find /sys/block /sys/dev/block /sys/dev/char -mindepth 1 | busybox wc -l
		busybox ls /sys/class'
	check "  ... block/, dev/block/, dev/char/ are empty; class/ has net/ only" "0
net" "$OUT"
}

# class/net and devices/virtual/net: the sandbox's own interfaces (its loopback), the kernel's
# files of them; none of the host's.
t_sysfs_net() {
	sh_box 'busybox ls /sys/class/net /sys/devices/virtual/net; busybox readlink /sys/class/net/lo
		cd /sys/class/net/lo && busybox cat operstate mtu address flags type ifindex
		busybox test -d statistics && busybox cat statistics/rx_packets'
	check "class/net: lo, a link to devices/virtual/net/lo, its attributes" \
		"/sys/class/net:
lo

/sys/devices/virtual/net:
lo
../../devices/virtual/net/lo
unknown
65536
00:00:00:00:00:00
0x9
772
1" "$(printf '%s\n' "$OUT" | head -n 12)"
	check_match "  ... statistics/rx_packets, a count" "^[0-9]+\$" "$(printf '%s\n' "$OUT" | tail -n 1)"
	sh_box 'cd /sys/class/net/lo; busybox ls; echo; busybox ls statistics'
	check_match "  ... lists its attribute files" "^mtu\$" "$OUT"
	check_match "  ... and statistics/, its counters" "^tx_bytes\$" "$OUT"
	# Security: the host's interfaces (its own, and its virtual ones under devices/virtual/net)
	# are not the guest's to see, by name or by listing.
	local hostif h leak=""
	hostif=$(ls /sys/class/net /sys/devices/virtual/net 2>/dev/null | grep -v -e '^lo$' -e '^$' -e ':$' | sort -u)
	for h in $hostif; do
		sh_box "busybox cat /sys/class/net/$h/address /sys/devices/virtual/net/$h/address 2>&1; busybox ls /sys/class/net /sys/devices/virtual/net"
		case "$OUT" in *"$h"*"No such file"*"$h"*"No such file"*) ;; *) leak="$leak $h" ;; esac
		if printf '%s\n' "$OUT" | grep -qx "$h"; then leak="$leak $h(listed)"; fi
	done
	check "  ... none of the host's interfaces ($(echo $hostif)) shows" "" "$leak"
	sh_box 'echo 1000 > /sys/class/net/lo/mtu; busybox cat /sys/class/net/lo/mtu'
	check "  ... a write is refused (read-only /sys), the MTU unchanged" "65536" "$OUT"
	check_match "  ... with the read-only file system's error" "Read-only file system" "$ERR"
}

# A task's state while it is stopped for a guest tracer (ptrace_emu.c) is Linux's "t (tracing
# stop)", and it sleeps again once detached; the sentry's own stops stay hidden (S).
t_tracing_stop() {
	box python3 -c 'import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
pid = os.fork()
if pid == 0:
    time.sleep(3)
    os._exit(0)
time.sleep(0.1)
libc.ptrace(16, pid, 0, 0)  # PTRACE_ATTACH
os.waitpid(pid, 0)
print(open(f"/proc/{pid}/stat").read().split()[2])
print([l.strip() for l in open(f"/proc/{pid}/status") if l.startswith("State")][0])
libc.ptrace(17, pid, 0, 0)  # PTRACE_DETACH
time.sleep(0.1)
print(open(f"/proc/{pid}/stat").read().split()[2])
os.kill(pid, 9)'
	check "a tracee stopped for its guest tracer: t (tracing stop), then S detached" "t
State:	t (tracing stop)
S" "$OUT"
}

# cpuN/topology: the host's, as lscpu reads it (it said 0 sockets and 0 cores without it).
t_topology() {
	local t=/sys/devices/system/cpu/cpu0/topology
	sh_box "busybox cat $t/core_cpus_list $t/physical_package_id $t/thread_siblings_list
		busybox ls /sys/devices/system/cpu/cpu0; busybox test -e $t/nope || echo no nope"
	local cache=""
	[ -d /sys/devices/system/cpu/cpu0/cache ] && cache=cache$'\n'
	check "cpu0/topology: the host's files" \
		"$(cat $t/core_cpus_list $t/physical_package_id $t/thread_siblings_list)
${cache}topology
no nope" "$OUT"
	box lscpu
	check "lscpu: the host's sockets, cores per socket, threads per core and NUMA nodes" \
		"$(lscpu | grep -E '^(Socket|Core|Thread|NUMA)' | tr -s ' ')" \
		"$(printf '%s\n' "$OUT" | grep -E '^(Socket|Core|Thread|NUMA)' | tr -s ' ')"
	check "lscpu: the host's caches (cpuN/cache/)" \
		"$(lscpu | grep -E '^L[0-9].* cache' | tr -s ' ')" \
		"$(printf '%s\n' "$OUT" | grep -E '^L[0-9].* cache' | tr -s ' ')"
	# cache/indexI/: the host's files; indexI only where the host has it; no uevent (a
	# device's event interface)
	local c=/sys/devices/system/cpu/cpu0/cache
	if [ -d $c/index0 ]; then
		sh_box "cd $c && busybox ls && busybox cat index0/level index0/type index0/size \
			index0/shared_cpu_list; busybox test -e index0/uevent || echo no uevent
			busybox test -e index31 || echo no index31"
		check "cpu0/cache: its indexes, index0's level, type, size and sharing, as the host's" \
			"$(cd $c && find . -mindepth 1 -maxdepth 1 -name 'index*' -printf '%f\n' | sort
				cat index0/level index0/type index0/size index0/shared_cpu_list)
no uevent
no index31" "$OUT"
	fi
	# node/: the host's NUMA nodes (none on a kernel without NUMA: then none inside either)
	local n=/sys/devices/system/node
	sh_box "busybox cat $n/online $n/node0/cpulist $n/node0/distance 2>/dev/null; busybox ls $n 2>/dev/null"
	check "node/: online, node0's cpulist and distance, the listing: the host's" \
		"$(cat $n/online $n/node0/cpulist $n/node0/distance 2>/dev/null
			find $n -mindepth 1 -maxdepth 1 \( -name 'node[0-9]*' -o -name online -o -name possible \
				-o -name 'has_*' \) -printf '%f\n' 2>/dev/null | grep -vx has_generic_initiator | sort)" \
		"$OUT"
}

# /proc/net: the sandbox's own sockets and interfaces, never the host's.
t_procnet() {
	# A listener of the host's, on its loopback: it must not show inside.
	python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
print(s.getsockname()[1], flush=True); sys.stdout.close(); time.sleep(60)' >"$SCRATCH/hostport" &
	local host_pid=$! i
	for i in $(seq 50); do [ -s "$SCRATCH/hostport" ] && break; sleep 0.1; done
	local host_port
	host_port=$(printf '%04X' "$(cat "$SCRATCH/hostport")")
	box python3 -c 'import os, socket, subprocess
s = socket.socket(); s.bind(("127.0.0.1", 8765)); s.listen()
print(os.readlink("/proc/net"))
tcp = open("/proc/net/tcp").read().splitlines()
print(tcp[0].split()[:4])
mine = [l.split() for l in tcp[1:] if l.split()[1] == "0100007F:223D"]
print(mine[0][3], "socket:[%s]" % mine[0][9] == os.readlink("/proc/self/fd/%d" % s.fileno()))
print(" ".join(l.split()[1] for l in tcp[1:]))
print(sorted(os.listdir("/proc/self/net")) == sorted(os.listdir("/proc/1/net")), "unix" in os.listdir("/proc/net"))
print([l.split(":")[0].strip() for l in open("/proc/net/dev").read().splitlines()[2:]])
ss = subprocess.run(["ss", "-Hltn"], capture_output=True, text=True).stdout.split()
print(ss[0], ss[3])
r, w = os.pipe()
print(all((os.stat("/proc/self/fd/%d" % f).st_ino, os.stat("/proc/self/fd/%d" % f).st_dev) ==
          (os.fstat(f).st_ino, os.fstat(f).st_dev) for f in (s.fileno(), r)))'
	kill "$host_pid" 2>/dev/null
	wait "$host_pid" 2>/dev/null
	local l=()
	mapfile -t l <<<"$OUT"
	check "/proc/net -> self/net" "self/net" "${l[0]:-}"
	check "/proc/net/tcp: Linux's header" "['sl', 'local_address', 'rem_address', 'st']" "${l[1]:-}"
	check "  ... the guest's listener, its inode the fd's" "0A True" "${l[2]:-}"
	check "  ... and only the sandbox's sockets: the host's listener is not there" \
		"0100007F:223D" "${l[3]:-}"
	check_match "  (the host's listener was up: port $host_port)" "^[0-9A-F]{4}\$" "$host_port"
	check "/proc/<pid>/net is the same, unix included" "True True" "${l[4]:-}"
	check "/proc/net/dev: the sandbox's loopback only" "['lo']" "${l[5]:-}"
	check "ss -ltn (on /proc/net, without sock_diag)" "LISTEN 127.0.0.1:8765" "${l[6]:-}"
	# (lsof -i matches the inode stat gives through the fd link against /proc/net)
	check "stat of fd/N (a socket, a pipe): fstat's inode and device" "True" "${l[7]:-}"
}

# /proc/net/unix: the sockets the guest holds, and only those: the namespace also holds the
# sentry's own (the ptrace platform's install socket, which every guest task holds hidden, and
# the sentry's end of the start-up socket), which must not show.
t_procnet_unix() {
	box python3 -c 'import os, socket, subprocess
s = socket.socket(socket.AF_UNIX); s.bind("/tmp/u.sock"); s.listen()
a = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); a.bind("\0cbox-test")
p, q = socket.socketpair()
lines = open("/proc/net/unix").read().splitlines()
print(lines[0])
rows = [l.split() for l in lines[1:]]
listed = sorted(r[6] for r in rows)
links = []
for f in os.listdir("/proc/self/fd"):
    try:
        links.append(os.readlink("/proc/self/fd/" + f))
    except FileNotFoundError:  # (the fd the listing used, closed by now)
        pass
held = sorted(k[8:-1] for k in links if k.startswith("socket:["))
print(len(listed), listed == held)
print([r[1:] for r in rows if r[6] == str(os.fstat(s.fileno()).st_ino)][0])
print([r[4:] for r in rows if r[6] == str(os.fstat(a.fileno()).st_ino)][0][2:])
print(set(r[0] for r in rows))
ss = subprocess.run(["ss", "-Hxl"], capture_output=True, text=True).stdout.split()
print(ss[0], ss[1], ss[4])'
	local l=()
	mapfile -t l <<<"$OUT"
	check "/proc/net/unix: Linux's header" \
		"Num       RefCount Protocol Flags    Type St Inode Path" "${l[0]:-}"
	check "  ... the guest's four sockets, the inodes its fds name, and no other" "4 True" \
		"${l[1]:-}"
	check_match "  ... a listener at its path, as Linux shows it" \
		"^\['00000002', '00000000', '00010000', '0001', '01', '[0-9]+', '/tmp/u.sock'\]\$" "${l[2]:-}"
	check_match "  ... an abstract name with Linux's @" "^\['[0-9]+', '@cbox-test'\]\$" "${l[3]:-}"
	check "  ... Num (a kernel address) as zeros" "{'0000000000000000:'}" "${l[4]:-}"
	check "ss -xl (on /proc/net/unix, without sock_diag)" "u_str LISTEN /tmp/u.sock" "${l[5]:-}"
}

# /proc/PID/syscall: the call a task is in, as the host sees it (the guest's own number and
# arguments), 0400 and refused (EACCES) to a reader who may not inspect the task, as Linux; the
# tiny init's, whose addresses are the sentry's, to everyone. It was missing.
t_syscall_file() {
	sh_box 'busybox sleep 5 & p=$!; busybox sleep 0.3; busybox cut -d" " -f1,2 /proc/$p/syscall
		busybox stat -c %a /proc/$p/syscall
		busybox su nobody -s /bin/sh -c "busybox cat /proc/$p/syscall" 2>&1 | busybox grep -c denied
		kill $p'
	local l=()
	mapfile -t l <<<"$OUT"
	check_match "syscall: a sleeping child's call (nanosleep or clock_nanosleep) and its first argument" \
		"^(35 0x[0-9a-f]+|230 0x0)\$" "${l[0]:-}"
	check "  ... 0400, refused to another user" "400 1" "${l[1]:-} ${l[2]:-}"
	CFG="$CFG --init" sh_box 'busybox cat /proc/1/comm /proc/1/syscall'
	check_match "  ... and the tiny init's to anyone" "cbox-init.*Permission denied" "$OUT $ERR"
}

for_each_config t_pid_files t_memory_io_files t_syscall_file t_zombie t_exec_name t_mounts t_sys_files t_sysfs t_sysfs_empty t_sysfs_net t_tracing_stop t_topology t_tools t_procnet t_procnet_unix
finish
