/*
 * Changes to the tree: the VFS half of mkdir, mknod, symlink, link, unlink, rename, setattr and
 * create. The syscall handlers (syscalls/sys_fsmut.c) decode arguments and make Linux's path
 * checks; these act on the file system of the directory and keep the dentry cache true.
 *
 * Only the gofer's tree can change. Which parts of it are writable is decided by the gofer's
 * mounts (a read-only rootfs, a writable working folder and /tmp): the host kernel answers
 * EROFS for the read-only ones, so the sentry never has to guess. The sentry's own /proc and
 * /dev refuse every change with EPERM, as sysfs-like file systems do on Linux.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cbox/log.h"
#include "internal.h"

static int not_gofer(const struct cbox_dentry *d)
{
	return d->mnt->readonly ? -EROFS : -EPERM;
}

static bool is_gofer(const struct cbox_dentry *d)
{
	return d->mnt->ops == &cbox_fs_gofer;
}

void cbox_vfs_forget(struct cbox_sentry *s, struct cbox_dentry *dir, const char *name)
{
	struct cbox_dentry *c = cbox_vfs_cached_child(dir, name);
	if (!c || c->covered_by)
		return;
	/* Hold it across the uncache so that an unreferenced entry (one only the cache kept) is
	 * freed now, and a referenced one (an open fd's, a cwd) lives on, nameless, until its
	 * last user lets go. */
	cbox_vfs_lru_del(s, c);
	c->refs++;
	cbox_vfs_uncache(c);
	cbox_dentry_put(s, c);
}

bool cbox_vfs_drop_stale(struct cbox_sentry *s, struct cbox_dentry *d, int err)
{
	bool stale = err == -ESTALE || err == -ENOENT || (err == 0 && d->stale);
	if (!stale || !is_gofer(d) || !d->cached || !d->parent || d->covered_by)
		return false;
	cbox_vfs_forget(s, d->parent, d->name);
	return true;
}

int cbox_vfs_walk_current(struct cbox_sentry *s, struct cbox_task *t, int dirfd, const char *path,
                          int flags, struct cbox_dentry **out)
{
	for (int tries = 0;; tries++) {
		int r = cbox_vfs_walk(s, t, dirfd, path, flags, out, NULL);
		if (r < 0 || !is_gofer(*out))
			return r;
		struct stat st;
		int sr = cbox_vfs_stat(s, t, *out, &st);
		if (tries > 0 || path[0] == '\0' || !cbox_vfs_drop_stale(s, *out, sr))
			return 0;
		cbox_dentry_put(s, *out);
	}
}

/*
 * Linux gives a new node its creator's fs uid, and its fs gid unless the directory is
 * set-group-ID (then the directory's group, which the host kernel gives the gofer's node too:
 * -1 keeps it). Under the OCI runtime as root (all_ids) the gofer runs as host root and gives
 * the node these ids itself, so that a guest user owns what it makes and can write it later.
 * Under cbox-run every guest id is the one host id the gofer runs as: nothing to change.
 */
void cbox_vfs_new_owner(const struct cbox_sentry *s, const struct cbox_task *t,
                        const struct cbox_dentry *dir, uint32_t *uid, uint32_t *gid)
{
	*uid = *gid = (uint32_t)-1;
	if (!s->cfg->all_ids)
		return;
	*uid = cbox_id_to_host(s, t->cred->fsuid, false);
	if (!(dir->mode & S_ISGID))
		*gid = cbox_id_to_host(s, t->cred->fsgid, true);
}

/*
 * Under cbox-run the host gives every new node the one host id (owners.c): the owner Linux
 * gives it (its creator's fs ids, or the set-group-ID directory's group) is the sentry's to
 * remember when it is not what that host id shows as. st: the node's stat when its creation
 * brought one, else the node is walked for it (name NULL: st given). A node whose owner cannot
 * be remembered (the table is full) shows as that host id's.
 */
void cbox_vfs_note_new_owner(struct cbox_sentry *s, const struct cbox_task *t,
                             struct cbox_dentry *dir, const char *name,
                             const struct cbox_gofer_stat *st)
{
	uint32_t uid = t->cred->fsuid;
	uint32_t gid = (dir->mode & S_ISGID) ? dir->gid : t->cred->fsgid;
	if (gid == CBOX_UNMAPPED_ID)
		gid = s->cfg->gid; /* the host gave it that group itself; nothing to remember */
	if (s->cfg->all_ids || (uid == s->cfg->uid && gid == s->cfg->gid))
		return;
	struct cbox_gofer_stat walked;
	uint32_t fid;
	if (!st) {
		uint32_t dfid;
		if (cbox_dentry_fid(s, dir, &dfid) < 0 ||
		    cbox_gofer_walk(s->gofer, dfid, name, &fid, &walked) < 0)
			return;
		cbox_gofer_clunk(s->gofer, fid);
		st = &walked;
	}
	if (cbox_owner_set(s, st->dev, st->ino, uid, gid) < 0)
		cbox_debug("the owner of new node %s: too many owners remembered",
		           name ? name : "(unnamed)");
}

/* d's last name went (unlink, or a rename over it): its remembered owner goes too, unless
 * another name still leads to its file. */
static void owner_gone_if_last(struct cbox_sentry *s, struct cbox_dentry *d)
{
	if (!d || !cbox_owner_known(s, d->host_dev, d->host_ino))
		return;
	struct cbox_gofer_stat g;
	uint32_t fid;
	if (!S_ISDIR(d->mode) && cbox_dentry_fid(s, d, &fid) == 0 &&
	    cbox_gofer_stat(s->gofer, fid, &g) == 0 && g.nlink > 0)
		return;
	cbox_owner_gone(s, d->host_dev, d->host_ino);
}

int cbox_vfs_mkdir(struct cbox_sentry *s, const struct cbox_task *t, struct cbox_dentry *dir,
                   const char *name, mode_t mode)
{
	if (!is_gofer(dir))
		return not_gofer(dir);
	uint32_t uid, gid, dfid;
	int r = cbox_dentry_fid(s, dir, &dfid);
	if (r < 0)
		return r;
	cbox_vfs_new_owner(s, t, dir, &uid, &gid);
	r = cbox_gofer_mkdir(s->gofer, dfid, name, mode & 07777, uid, gid);
	if (cbox_vfs_relieve(s, r)) /* (see cbox_vfs_create) */
		r = cbox_gofer_mkdir(s->gofer, dfid, name, mode & 07777, uid, gid);
	if (r == 0)
		cbox_vfs_note_new_owner(s, t, dir, name, NULL);
	return r;
}

int cbox_vfs_mknod(struct cbox_sentry *s, const struct cbox_task *t, struct cbox_dentry *dir,
                   const char *name, mode_t mode)
{
	if (!is_gofer(dir))
		return not_gofer(dir);
	uint32_t fid, uid, gid, dfid;
	struct cbox_gofer_stat st;
	int r = cbox_dentry_fid(s, dir, &dfid);
	if (r < 0)
		return r;
	cbox_vfs_new_owner(s, t, dir, &uid, &gid);
	r = cbox_gofer_mknod(s->gofer, dfid, name, mode, uid, gid, &fid, &st);
	if (cbox_vfs_relieve(s, r)) /* (see cbox_vfs_create) */
		r = cbox_gofer_mknod(s->gofer, dfid, name, mode, uid, gid, &fid, &st);
	if (r == 0) {
		cbox_gofer_clunk(s->gofer, fid);
		cbox_vfs_note_new_owner(s, t, dir, name, &st);
	}
	return r;
}

int cbox_vfs_symlink(struct cbox_sentry *s, const struct cbox_task *t, struct cbox_dentry *dir,
                     const char *name, const char *target)
{
	if (!is_gofer(dir))
		return not_gofer(dir);
	uint32_t uid, gid, dfid;
	int r = cbox_dentry_fid(s, dir, &dfid);
	if (r < 0)
		return r;
	cbox_vfs_new_owner(s, t, dir, &uid, &gid);
	r = cbox_gofer_symlink(s->gofer, dfid, name, target, uid, gid);
	if (cbox_vfs_relieve(s, r)) /* (see cbox_vfs_create) */
		r = cbox_gofer_symlink(s->gofer, dfid, name, target, uid, gid);
	if (r == 0)
		cbox_vfs_note_new_owner(s, t, dir, name, NULL);
	return r;
}

int cbox_vfs_link(struct cbox_sentry *s, struct cbox_dentry *d, struct cbox_dentry *dir,
                  const char *name)
{
	if (d->mnt != dir->mnt)
		return -EXDEV;
	if (!is_gofer(dir))
		return not_gofer(dir);
	uint32_t fid, dfid;
	int r = cbox_dentry_fid(s, d, &fid);
	if (r == 0)
		r = cbox_dentry_fid(s, dir, &dfid);
	return r < 0 ? r : cbox_gofer_link(s->gofer, fid, dfid, name);
}

int cbox_vfs_unlink(struct cbox_sentry *s, struct cbox_dentry *dir, const char *name, bool isdir)
{
	if (!is_gofer(dir))
		return not_gofer(dir);
	struct cbox_dentry *c = cbox_vfs_cached_child(dir, name);
	if (c && c->covered_by)
		return -EBUSY; /* a mount point of the sentry's own tree */
	uint32_t dfid;
	int r = cbox_dentry_fid(s, dir, &dfid);
	if (r == 0)
		r = cbox_gofer_unlink(s->gofer, dfid, name, isdir);
	if (r == 0)
		owner_gone_if_last(s, c);
	if (r == 0 && c)
		c->unlinked = true;
	if (r == 0)
		cbox_vfs_forget(s, dir, name);
	return r;
}

int cbox_vfs_rename(struct cbox_sentry *s, struct cbox_dentry *odir, const char *oname,
                    struct cbox_dentry *ndir, const char *nname, unsigned flags)
{
	if (odir->mnt != ndir->mnt)
		return -EXDEV;
	if (!is_gofer(odir))
		return not_gofer(odir);
	struct cbox_dentry *c = cbox_vfs_cached_child(odir, oname),
	                   *n = cbox_vfs_cached_child(ndir, nname);
	if ((c && c->covered_by) || (n && n->covered_by))
		return -EBUSY;
	uint32_t ofid, nfid;
	int r = cbox_dentry_fid(s, odir, &ofid);
	if (r == 0)
		r = cbox_dentry_fid(s, ndir, &nfid);
	if (r == 0)
		r = cbox_gofer_rename(s->gofer, ofid, oname, nfid, nname, flags);
	if (r == 0 && !(flags & RENAME_EXCHANGE) && n != c)
		owner_gone_if_last(s, n);
	if (r == 0) {
		cbox_vfs_forget(s, odir, oname);
		cbox_vfs_forget(s, ndir, nname);
	}
	return r;
}

void cbox_vfs_kill_setid(struct cbox_sentry *s, struct cbox_dentry *d)
{
	cbox_owner_kill_setid(s, d->host_dev, d->host_ino, d->mode);
	d->mode = (d->mode & ~(uint32_t)(S_ISUID | S_ISGID)) |
	          cbox_owner_setid(s, d->host_dev, d->host_ino);
}

int cbox_vfs_setattr(struct cbox_sentry *s, struct cbox_dentry *d,
                     const struct cbox_gofer_setattr *a)
{
	if (!is_gofer(d))
		return not_gofer(d);
	struct cbox_gofer_setattr host = *a;
	host.valid &= ~CBOX_VFS_KILL_SETID;
	host.uid = cbox_id_to_host(s, a->uid, false);
	host.gid = cbox_id_to_host(s, a->gid, true);
	uint32_t fid;
	int r = cbox_dentry_fid(s, d, &fid);
	if (r == 0 && (host.valid & ~CBOX_GOFER_SET_BY_NAME))
		r = cbox_gofer_setattr(s->gofer, fid, &host);
	if (r == 0 && (a->valid & (CBOX_GOFER_SET_UID | CBOX_GOFER_SET_GID)) && !s->cfg->all_ids) {
		/* One host id: the host owner stayed (the call still did what chown does to the
		 * file: ctime, the set-user-ID bit); the owner given is the sentry's to show. An
		 * id left alone keeps what the sentry remembers (this dentry's may be older). */
		r = cbox_owner_chown(s, d->host_dev, d->host_ino,
		                     (a->valid & CBOX_GOFER_SET_UID) ? a->uid : (uint32_t)-1,
		                     (a->valid & CBOX_GOFER_SET_GID) ? a->gid : (uint32_t)-1);
	}
	/* The set-ID bits a chmod gives: the host file never has them but a directory's
	 * set-group-ID, which the host keeps (safe_mode in gofer/serve_mut.c). */
	uint32_t kept = S_ISUID | (S_ISDIR(d->mode) ? 0 : S_ISGID);
	if (r == 0 && (a->valid & CBOX_GOFER_SET_MODE) &&
	    cbox_owner_set_setid(s, d->host_dev, d->host_ino, a->mode & kept) < 0)
		cbox_debug("the set-ID bits of a file: too many files remembered");
	if (r == 0 && (a->valid & CBOX_GOFER_SET_MODE))
		d->mode = (d->mode & S_IFMT) | (a->mode & 07777);
	if (r == 0 && (a->valid & CBOX_VFS_KILL_SETID) && !S_ISDIR(d->mode))
		cbox_vfs_kill_setid(s, d);
	if (r == 0 && (a->valid & CBOX_GOFER_SET_UID))
		d->uid = a->uid;
	if (r == 0 && (a->valid & CBOX_GOFER_SET_GID))
		d->gid = a->gid;
	return r;
}

int cbox_vfs_create(struct cbox_sentry *s, const struct cbox_task *t, struct cbox_dentry *dir,
                    const char *name, int flags, mode_t mode, struct cbox_dentry **out)
{
	if (!is_gofer(dir))
		return not_gofer(dir);
	uint32_t fid, uid, gid, dfid;
	int r = cbox_dentry_fid(s, dir, &dfid);
	if (r < 0)
		return r;
	cbox_vfs_new_owner(s, t, dir, &uid, &gid);
	struct cbox_gofer_stat st;
	/* Only the flags that describe the open file; O_CREAT|O_EXCL is what CREATE means. */
	int keep = O_ACCMODE | O_APPEND | O_NONBLOCK | O_TRUNC | O_NOATIME | O_DSYNC | O_SYNC |
	           O_DIRECT | O_NOCTTY;
	int fd = cbox_gofer_create(s->gofer, dfid, name, (flags & keep) | O_CLOEXEC, mode & 07777,
	                           uid, gid, &fid, &st);
	/* The gofer out of fds (its fids, one per cached dentry): the cache is cut and the request
	 * made again, as for a walk (cbox_vfs_relieve). A lookup before the create used to meet
	 * the limit first; now the sentry answers a missing name itself (fs_gofer_local.c). A
	 * CREATE, MKDIR, MKNOD, SYMLINK or TMPFILE that fails so leaves nothing behind in the
	 * gofer (serve_mut.c undoes what it made), so it can be made again. */
	if (cbox_vfs_relieve(s, fd))
		fd = cbox_gofer_create(s->gofer, dfid, name, (flags & keep) | O_CLOEXEC,
		                       mode & 07777, uid, gid, &fid, &st);
	if (fd < 0)
		return fd;
	cbox_vfs_note_new_owner(s, t, dir, name, &st);
	/* The set-ID bits of the mode asked for (owners.c), with Linux's rule for a set-group-ID
	 * directory (mode_strip_sgid): a caller neither in its group nor with CAP_FSETID makes no
	 * set-group-ID file with group execute in it. */
	uint32_t setid = mode & (S_ISUID | S_ISGID);
	if ((mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP) && (dir->mode & S_ISGID) &&
	    !cbox_cred_in_group(t->cred, dir->gid) &&
	    !cbox_cred_capable_wrt(t->cred, CAP_FSETID, dir->uid, dir->gid))
		setid &= ~(uint32_t)S_ISGID;
	if (setid && cbox_owner_set_setid(s, st.dev, st.ino, setid) < 0)
		cbox_debug("the set-ID bits of new file %s: too many files remembered", name);
	struct cbox_dentry *d = cbox_fs_gofer_dentry(s, dir, name, fid, &st);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	cbox_vfs_cache(s, dir, d);
	*out = d;
	return fd;
}

int cbox_vfs_tmpfile(struct cbox_sentry *s, const struct cbox_task *t, struct cbox_dentry *dir,
                     int flags, mode_t mode, struct cbox_dentry **out)
{
	if (!is_gofer(dir))
		return dir->mnt->readonly ? -EROFS
		                          : -EOPNOTSUPP; /* /proc, /dev: as sysfs answers */
	uint32_t fid, uid, gid, dfid;
	struct cbox_gofer_stat st;
	int r = cbox_dentry_fid(s, dir, &dfid);
	if (r < 0)
		return r;
	cbox_vfs_new_owner(s, t, dir, &uid, &gid);
	int keep = O_ACCMODE | O_EXCL | O_APPEND | O_NONBLOCK | O_NOATIME | O_DSYNC | O_SYNC |
	           O_DIRECT | O_NOCTTY;
	int fd = cbox_gofer_tmpfile(s->gofer, dfid, (flags & keep) | O_CLOEXEC, mode & 07777, uid,
	                            gid, &fid, &st);
	if (cbox_vfs_relieve(s, fd)) /* (see cbox_vfs_create) */
		fd = cbox_gofer_tmpfile(s->gofer, dfid, (flags & keep) | O_CLOEXEC, mode & 07777,
		                        uid, gid, &fid, &st);
	if (fd < 0)
		return fd;
	cbox_vfs_note_new_owner(s, t, dir, NULL, &st);
	/* Named as Linux names it in /proc/PID/fd ("#" and the inode number, then " (deleted)"),
	 * never cached: no walk can find it. */
	char name[32];
	snprintf(name, sizeof(name), "#%llu", (unsigned long long)st.ino);
	struct cbox_dentry *d = cbox_fs_gofer_dentry(s, dir, name, fid, &st);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	d->unlinked = true;
	cbox_fs_gofer_keep_anon(s, d, fd);
	*out = d;
	return fd;
}

int cbox_vfs_writable(struct cbox_sentry *s, struct cbox_dentry *d)
{
	if (d->mnt->readonly)
		return -EROFS;
	if (!is_gofer(d))
		return 0;
	if (d->ro_stat)
		return -EROFS; /* (the gofer marked its mount read-only) */
	struct cbox_gofer_statfs sf;
	uint32_t fid;
	int r = cbox_dentry_fid(s, d, &fid);
	if (r == 0)
		r = cbox_gofer_statfs(s->gofer, fid, &sf);
	if (r < 0)
		return r;
	return (sf.flags & ST_RDONLY) ? -EROFS : 0;
}
