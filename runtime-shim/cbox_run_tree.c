/*
 * What the guest of cbox-run sees: the gofer's tree for the options (the rootfs read-only with the
 * host's secrets hidden, the working folder, /tmp, the sandbox's own /etc/hostname, /etc/hosts and,
 * with --network, /etc/resolv.conf, the -v mounts). The command line is cbox_run_opts.c's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cbox/cleanup.h"
#include "cbox/path.h"
#include "cbox_run.h"

/* The host's secrets and runtime state, hidden when the guest's root is the host's own. Paths
 * that do not exist are skipped by the gofer. */
static const char *const default_hide[] = {
    "/root", "/home", "/etc/ssh", "/etc/ssl/private", "/run", "/var/run/docker.sock", "/var/lib",
};
/* /etc/shadow*, /etc/gshadow*: the password files and their backups (shadow-, shadow.old). */
static const char *const default_hide_etc[] = {"shadow*", "gshadow*"};

/* The default hides with a wildcard, matched against one listing of their directory (a glob()
 * each read /etc twice over, 0.1 ms of every start). */
static int add_wildcard_hides(struct cbox_run_opts *o, const char *dir, const char *const *patterns,
                              size_t n)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0; /* nothing there to hide */
	int r = 0;
	for (struct dirent *e; r == 0 && (e = readdir(d));) {
		for (size_t i = 0; i < n; i++) {
			if (fnmatch(patterns[i], e->d_name, FNM_PERIOD) != 0)
				continue;
			char path[PATH_MAX];
			if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >=
			        (int)sizeof(path) ||
			    cbox_run_push_str(&o->hide, &o->n_hide, path) < 0)
				r = -1;
			break;
		}
	}
	closedir(d);
	return r;
}

/* Where a home keeps credentials (keys, cloud and registry tokens, a forge CLI's login). */
static const char *const home_secrets[] = {
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".pypirc",
    ".npmrc",
    ".cargo/credentials.toml",
};

/* Hide the credentials of the home at the real path home, when the working folder wd holds it. */
static int hide_home_secrets(struct cbox_run_opts *o, const char *home, const char *wd)
{
	if (strcmp(home, "/") == 0 || !cbox_gofer_path_at_or_below(home, wd))
		return 0;
	for (size_t i = 0; i < sizeof(home_secrets) / sizeof(home_secrets[0]); i++) {
		char path[PATH_MAX];
		struct stat st;
		if (snprintf(path, sizeof(path), "%s/%s", home, home_secrets[i]) >=
		        (int)sizeof(path) ||
		    lstat(path, &st) < 0)
			continue;
		bool dup = false; /* $HOME is also found in /home's listing */
		for (size_t j = 0; j < o->n_hide && !dup; j++)
			dup = strcmp(o->hide[j], path) == 0;
		if (!dup && cbox_run_push_str(&o->hide, &o->n_hide, path) < 0)
			return -1;
	}
	return 0;
}

/*
 * The credentials of the homes the working folder holds (`cd ~ && cbox-run ...`, or `cd /home`):
 * the hide of /home gives the working folder back whole, and with it ~/.ssh, the key the
 * threat model's attack reads, and from /home every other user's (all readable when root runs
 * cbox-run). They are hidden there too (made after the working folder's bind, gofer/tree.c); a
 * -v of one of them shows it again (-v wins). The homes are $HOME (cbox-run is static: no NSS to
 * ask), /root (hidden whole unless the working folder holds it; sudo may keep the caller's
 * HOME) and each directory in /home, resolved as the working folder is.
 */
static int add_home_hides(struct cbox_run_opts *o, const char *wd)
{
	/* (a working folder of "/" is not shown at all: /home and /root stay hidden whole) */
	if (strcmp(wd, "/") == 0)
		return 0;
	const char *env = getenv("HOME");
	char home[PATH_MAX], homes[PATH_MAX];
	if (env && env[0] == '/' && realpath(env, home) && hide_home_secrets(o, home, wd) < 0)
		return -1;
	if (realpath("/root", home) && hide_home_secrets(o, home, wd) < 0)
		return -1;
	if (!realpath("/home", homes) || !cbox_gofer_path_at_or_below(homes, wd))
		return 0;
	DIR *d = opendir(homes);
	if (!d)
		return 0;
	int r = 0;
	for (struct dirent *e; r == 0 && (e = readdir(d));) {
		char path[PATH_MAX];
		struct stat st;
		/* (a link in /home leads elsewhere: the home it names is not held) */
		if (e->d_name[0] == '.' ||
		    snprintf(path, sizeof(path), "%s/%s", homes, e->d_name) >= (int)sizeof(path) ||
		    lstat(path, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		r = hide_home_secrets(o, path, wd);
	}
	closedir(d);
	return r;
}

static int add_default_hides(struct cbox_run_opts *o)
{
	for (size_t i = 0; i < sizeof(default_hide) / sizeof(default_hide[0]); i++)
		if (cbox_run_push_str(&o->hide, &o->n_hide, default_hide[i]) < 0)
			return -1;
	return add_wildcard_hides(o, "/etc", default_hide_etc,
	                          sizeof(default_hide_etc) / sizeof(default_hide_etc[0]));
}

/*
 * The sandbox's /etc/hostname and /etc/hosts, as Docker gives a container its own: the host's
 * name in /etc/hostname would contradict uname's, and a host name /etc/hosts cannot resolve
 * breaks programs that look their own up (Java's InetAddress.getLocalHost() threw
 * UnknownHostException, python's gethostbyname(gethostname()) said "Temporary failure in name
 * resolution": with no network, the resolver's DNS servers are out of reach). The name is on
 * 127.0.1.1, as Debian's installer writes it, since the sandbox has loopback only. The host's
 * own entries are not shown (nothing outside is reachable by them). Not where the user hid the
 * path or a directory above it (--hide /etc/hosts shows an empty file, as before), and not
 * where the rootfs lacks the file (room for it would have to be made in the rootfs's /etc).
 */
static const char etc_hosts[] = "127.0.0.1\tlocalhost\n"
                                "::1\tlocalhost ip6-localhost ip6-loopback\n"
                                "fe00::0\tip6-localnet\n"
                                "ff00::0\tip6-mcastprefix\n"
                                "ff02::1\tip6-allnodes\n"
                                "ff02::2\tip6-allrouters\n"
                                "127.0.1.1\t" CBOX_RUN_HOSTNAME "\n";

static bool hidden(const struct cbox_run_opts *o, const char *path)
{
	for (size_t i = 0; i < o->n_hide; i++)
		if (cbox_gofer_path_at_or_below(path, o->hide[i]))
			return true;
	return false;
}

/*
 * A file of the rootfs as the guest would find it, for reading: symlinks resolved inside the
 * rootfs as if it were the root (openat2's RESOLVE_IN_ROOT; ".." stops there too), and only a
 * regular file, which is opened only once it is known to be one (an O_PATH open, then its
 * /proc/self/fd link). NULL with errno set otherwise.
 *
 * Security: cbox-run reads the rootfs's /etc/passwd, /etc/group and /etc/resolv.conf itself, on
 * the host and as its caller (root, when run by root), and a rootfs is any directory, such as an
 * unpacked image nobody reviewed. Through a plain path an absolute symlink in it (etc/passwd ->
 * /some/host/file) led to the host's file, whose fields then became the program's ids (-u
 * NAME), and a FIFO there (etc/group) hung cbox-run; runc reads an image's /etc/passwd through
 * a path resolved inside the rootfs the same way. Tested by t_rootfs_etc_links
 * (tests/integration/test_programs.sh).
 */
FILE *cbox_run_rootfs_fopen(const char *rootfs, const char *rel)
{
	int root = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return NULL;
	int p = cbox_open_in_root(root, rel, O_PATH);
	int err = errno;
	close(root);
	if (p < 0) {
		errno = err;
		return NULL;
	}
	struct stat st;
	FILE *f = NULL;
	if (fstat(p, &st) < 0) {
		err = errno;
	} else if (!S_ISREG(st.st_mode)) {
		err = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
	} else {
		char link[64];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", p);
		f = fopen(link, "re");
		err = errno;
	}
	close(p);
	errno = err;
	return f;
}

/*
 * A --hide that leads to the rootfs's root itself (a symlink to /): what a path leads to is what
 * the tiers hide (gofer/tree.c hide_one; the ns tier's tmpfs on the resolved target), and an
 * empty root is no sandbox to run in. Said here for both tiers. 0, or -1 (said).
 */
static int check_hides(const struct cbox_run_opts *o)
{
	CBOX_AUTOCLOSE int root = open(o->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct stat rst, st;
	if (root < 0 || fstat(root, &rst) < 0)
		return 0; /* (the gofer says what is wrong with the rootfs) */
	for (size_t i = 0; i < o->n_hide; i++) {
		const char *rel = o->hide[i] + strspn(o->hide[i], "/");
		CBOX_AUTOCLOSE int fd = *rel ? cbox_open_in_root(root, rel, O_PATH) : -1;
		if ((!*rel || (fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == rst.st_dev &&
		               st.st_ino == rst.st_ino))) {
			fprintf(stderr, "cbox-run: --hide %s: it leads to the root\n", o->hide[i]);
			return -1;
		}
	}
	return 0;
}

/*
 * With --network slirp4netns, the sandbox's /etc/resolv.conf names slirp4netns's DNS forwarder
 * (which asks the host's own servers), as rootless Podman writes it: the host's may name a
 * resolver on its loopback (systemd-resolved's 127.0.0.53, dnsmasq), out of the sandbox's reach.
 * The host's search domains and options are kept. NULL without --network, or on no memory.
 */
static char *make_resolv_conf(const struct cbox_run_opts *o)
{
	if (!o->net.slirp)
		return NULL;
	char *buf = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&buf, &size);
	if (!out)
		return NULL;
	fputs("nameserver 10.0.2.3\n", out);
	if (o->net.ipv6)
		fputs("nameserver fd00::3\n", out);
	FILE *in = cbox_run_rootfs_fopen(o->rootfs, "etc/resolv.conf");
	char line[1024];
	while (in && fgets(line, sizeof(line), in))
		if (strncmp(line, "search", 6) == 0 || strncmp(line, "domain", 6) == 0 ||
		    strncmp(line, "options", 7) == 0)
			fputs(line, out);
	if (in)
		fclose(in);
	if (fclose(out) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static size_t add_etc_files(struct cbox_run_opts *o, struct cbox_gofer_mount *all)
{
	struct {
		const char *path, *content;
	} files[3] = {{"/etc/hostname", CBOX_RUN_HOSTNAME "\n"}, {"/etc/hosts", etc_hosts}};
	size_t nf = 2;
	free(o->resolv_conf);
	if ((o->resolv_conf = make_resolv_conf(o))) {
		files[nf].path = "/etc/resolv.conf";
		files[nf++].content = o->resolv_conf;
	}
	size_t n = 0;
	for (size_t i = 0; i < nf; i++) {
		char in_rootfs[PATH_MAX];
		struct stat st;
		/* (a symlink is not followed on the host: it would resolve outside the rootfs) */
		if (snprintf(in_rootfs, sizeof(in_rootfs), "%s%s", o->rootfs, files[i].path) >=
		        (int)sizeof(in_rootfs) ||
		    lstat(in_rootfs, &st) < 0 || !S_ISREG(st.st_mode) || hidden(o, files[i].path)) {
			if (files[i].content == o->resolv_conf)
				fprintf(
				    stderr,
				    "cbox-run: warning: --network: the rootfs's /etc/resolv.conf "
				    "is not a file the sandbox can show its own in place of (a "
				    "symlink, or hidden): names may not resolve\n");
			continue;
		}
		/* writable with --overlay, as the rest of the root (and Docker's are) */
		all[n++] = (struct cbox_gofer_mount){.kind = CBOX_GOFER_MOUNT_FILE,
		                                     .target = files[i].path,
		                                     .content = files[i].content,
		                                     .readonly = !o->overlay};
	}
	return n;
}

/*
 * The guest's own home, as its passwd entry names it (/root for root), where the hides leave
 * it empty and read-only: an empty tmpfs of the sandbox's instead, writable and gone with it,
 * as firejail --private gives one. HOME is /tmp/home, but Java (user.home), ssh and others
 * take the passwd entry's: under the read-only /root, jshell could not keep its preferences
 * and Maven could not make ~/.m2. Nothing of the host's home shows (it stays hidden under the
 * new tmpfs). Only a home the rootfs has, as a directory (its mode kept; "/nonexistent" is
 * nobody's), and that neither the working folder, /tmp nor a -v shows already. 0 with *m set,
 * or -1: none.
 */
static int own_home(const struct cbox_run_opts *o, const char *wd, struct cbox_gofer_mount *m)
{
	static char home[PATH_MAX];
	if (cbox_run_user_home(o, home, sizeof(home)) < 0 || home[0] != '/' || !hidden(o, home))
		return -1;
	/* (the gofer takes a target without "." or ".." components, or a trailing "/") */
	CBOX_AUTOFREE char *clean = cbox_path_clean(home);
	if (!clean || strcmp(clean, home) != 0 || strcmp(home, "/") == 0)
		return -1;
	if ((strcmp(wd, "/") != 0 && cbox_gofer_path_at_or_below(home, wd)) ||
	    cbox_gofer_path_at_or_below(home, "/tmp"))
		return -1;
	for (size_t i = 0; i < o->n_mounts; i++)
		if (cbox_gofer_path_at_or_below(home, o->mounts[i].target))
			return -1;
	CBOX_AUTOCLOSE int root = open(o->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	CBOX_AUTOCLOSE int fd = root < 0 ? -1 : cbox_open_in_root(root, home + 1, O_PATH);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode))
		return -1;
	*m = (struct cbox_gofer_mount){.kind = CBOX_GOFER_MOUNT_TMPFS,
	                               .target = home,
	                               .mode_set = true,
	                               .mode = st.st_mode & 07777};
	return 0;
}

int cbox_run_tree(struct cbox_run_opts *o, struct cbox_gofer_config *gc, const char **cwd)
{
	bool host_root = strcmp(o->rootfs, "/") == 0;
	char devdir[PATH_MAX];
	struct stat st;
	snprintf(devdir, sizeof(devdir), "%s/dev", o->rootfs);
	o->dev_shm = stat(devdir, &st) == 0 && S_ISDIR(st.st_mode);
	static char wd[PATH_MAX];
	/* The working folder: the caller's directory when the guest's root is the host's (as
	 * bwrap --bind "$PWD" "$PWD"); the rootfs's / otherwise. */
	if (o->workdir) {
		if (!realpath(o->workdir, wd)) {
			fprintf(stderr, "cbox-run: --workdir %s: %s\n", o->workdir,
			        strerror(errno));
			return -1;
		}
	} else if (!host_root) {
		strcpy(wd, "/");
	} else if (!getcwd(wd, sizeof(wd))) {
		/* (a directory removed while the caller stood in it, or one it cannot name) */
		fprintf(stderr,
		        "cbox-run: warning: the current directory cannot be named (%s): the "
		        "program starts in / with no writable working folder (see --workdir)\n",
		        strerror(errno));
		strcpy(wd, "/");
	}
	*cwd = wd;
	if (host_root && (add_default_hides(o) < 0 || add_home_hides(o, wd) < 0))
		return -1;
	if (check_hides(o) < 0)
		return -1;
	struct cbox_gofer_mount tmp = {.kind = CBOX_GOFER_MOUNT_TMPFS, .target = "/tmp"};
	struct cbox_gofer_mount work = {
	    .kind = CBOX_GOFER_MOUNT_BIND, .source = wd, .target = wd, .readonly = o->workdir_ro};
	/* The order is the gofer's: /tmp first, so that a working folder under /tmp or a -v into
	 * it lands on the guest's tmpfs; then the guest's own home, the working folder and
	 * /etc/host{s,name} (and resolv.conf with --network); then -v, which may cover them.
	 * The host root itself is never made writable, even when the caller stands in "/". */
	struct cbox_gofer_mount *all = calloc(o->n_mounts + 8, sizeof(*all));
	if (!all)
		return -1;
	free(o->tree);
	o->tree = all;
	size_t n = 0;
	all[n++] = tmp;
	/* /dev/shm for POSIX shared memory and semaphores: a tmpfs in the gofer's tree (on an
	 * empty tmpfs /dev of its own, since the host's /dev is never served); the sentry shows
	 * it inside its own /dev. */
	if (o->dev_shm) {
		all[n++] =
		    (struct cbox_gofer_mount){.kind = CBOX_GOFER_MOUNT_TMPFS, .target = "/dev"};
		all[n++] =
		    (struct cbox_gofer_mount){.kind = CBOX_GOFER_MOUNT_TMPFS, .target = "/dev/shm"};
	}
	if (own_home(o, wd, &all[n]) == 0)
		n++; /* before the working folder, which may lie in it */
	if (host_root && strcmp(wd, "/") != 0)
		all[n++] = work;
	n += add_etc_files(o, all + n); /* before -v: a -v on them wins */
	for (size_t i = 0; i < o->n_mounts; i++)
		all[n++] = o->mounts[i];
	static const char *const mkdirs[] = {CBOX_RUN_GUEST_HOME};
	*gc = (struct cbox_gofer_config){.rootfs = o->rootfs,
	                                 .readonly = true,
	                                 .hide = (const char *const *)o->hide,
	                                 .n_hide = o->n_hide,
	                                 .mounts = all,
	                                 .n_mounts = n,
	                                 .mkdirs = mkdirs,
	                                 .n_mkdirs = 1,
	                                 .overlay = o->overlay};
	return 0;
}
