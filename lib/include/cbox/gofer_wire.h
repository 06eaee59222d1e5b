#pragma once
/*
 * The gofer wire format (shared by the gofer and the sentry). One message per SOCK_SEQPACKET
 * packet: a fixed header, then a type-specific body; fds travel as SCM_RIGHTS beside a reply.
 * All integers are little-endian host order (both ends are on one machine); every length is
 * checked by the decoder before any field is read.
 */
#include <stddef.h>
#include <stdint.h>
#include "cbox/compiler.h"

/* Attributes of a file as the gofer reports them (lstat of the entry). */
struct cbox_gofer_stat {
	uint64_t dev;
	uint64_t ino;
	uint32_t mode;
	uint32_t nlink;
	uint32_t uid;
	uint32_t gid;
	uint64_t rdev;
	int64_t size;
	int64_t blksize;
	int64_t blocks;
	int64_t atime_sec, atime_nsec;
	int64_t mtime_sec, mtime_nsec;
	int64_t ctime_sec, ctime_nsec;
	uint64_t flags; /* CBOX_GOFER_STAT_* */
};

/* cbox_gofer_stat.flags: the file lies on a read-only mount of the gofer's tree (the sentry may
 * keep what it learns of it). */
#define CBOX_GOFER_STAT_RDONLY 1u
/* STAT replies only: the name the fid was walked by no longer leads to this file (the host
 * removed or replaced it since); the stat is the file's own all the same. */
#define CBOX_GOFER_STAT_STALE 2u
/* WALKOPEN and WALKNOPEN replies only (the file walked last): an fd of the file, opened
 * read-only, travels beside the reply. */
#define CBOX_GOFER_STAT_OPENED 4u

struct cbox_gofer_statfs {
	uint64_t type;
	uint64_t bsize;
	uint64_t blocks;
	uint64_t bfree;
	uint64_t bavail;
	uint64_t files;
	uint64_t ffree;
	uint64_t namelen;
	uint64_t frsize;
	uint64_t flags;
};

/*
 * Message layout. Every packet starts with this header; len is the length of the whole packet
 * (header included) and must equal the number of bytes received. The tag of a request is echoed
 * in its reply. A request's pad is a hint, any value of which decodes: the CPU the sender ran on
 * when it sent, plus 1 (0: none), where the gofer then waits for the next request (see
 * gofer/session.c). A reply's pad is sent as 0 and ignored.
 *
 * Request bodies ("name" = u16 length + that many bytes, no NUL; "target" likewise; "owner" =
 * u32 uid, u32 gid, see below):
 *   WALK     u32 dirfid, name
 *   CLUNK, STAT, READLINK, STATFS   u32 fid
 *   VIEW     u32 fid  (the root's, CBOX_GOFER_ROOT_FID, only: an O_PATH fd of the tree's root
 *            seen through the sandbox's user namespace, a read-only idmapped copy of the tree,
 *            so that the sentry's own stat of a file there shows the owner the gofer's would;
 *            EOPNOTSUPP when the gofer was given no such namespace: cbox_gofer_spawn_view)
 *   OPEN     u32 fid, u32 flags
 *   CREATE   u32 dirfid, owner, u32 flags, u32 mode, name
 *   TMPFILE  u32 dirfid, owner, u32 flags, u32 mode  (an unnamed file in dirfid, open(2)'s
 *            O_TMPFILE; a later LINK of its fid gives it a name unless flags has O_EXCL)
 *   MKDIR    u32 dirfid, owner, u32 mode, name
 *   MKNOD    u32 dirfid, owner, u32 mode, name
 *   SYMLINK  u32 dirfid, owner, name, target
 *   UNLINK   u32 dirfid, u32 isdir (0|1), name
 *   RENAME   u32 olddir, name, u32 newdir, name, u32 flags (0, RENAME_NOREPLACE or
 *            RENAME_EXCHANGE)
 *   LINK     u32 fid, u32 dirfid, name
 *   SETATTR  u32 fid, u32 valid, u32 mode, u32 uid, u32 gid, u32 pad (0), i64 size,
 *            i64 atime_sec, i64 atime_nsec, i64 mtime_sec, i64 mtime_nsec
 *            (valid: CBOX_GOFER_SET_* bits, no others; with SET_SIZE size >= 0; with SET_TIMES
 *            each nsec is 0..999999999, UTIME_NOW or UTIME_OMIT)
 *   INOTIFY  u32 fid, u32 mask (and the guest's inotify fd as SCM_RIGHTS); OK body: u32 wd
 *   BIND     u32 cwdfid, owner, u32 mode, sockpath  (sockpath: u16 length + 1..108 bytes, no
 *            NUL: an AF_UNIX sun_path as the guest gave it; mode (0..0777): the socket node's,
 *            the guest's umask applied; the packet carries the socket as SCM_RIGHTS. BIND,
 *            CONNECT, SENDTO and INOTIFY are the only requests that may carry an fd)
 *   CONNECT  u32 fid, u32 dirfid, sockpath  (connect the socket the packet carries to sockpath
 *            from dirfid, only when that names fid's node and the node is a socket a guest of
 *            this session bound; non-blocking: EAGAIN where Linux would wait)
 *   SENDTO   u32 fid, u32 dirfid, u32 flags, sockpath, value  (send value, up to 65536 bytes, as
 *            one datagram from the datagram socket the packet carries to sockpath from dirfid,
 *            on the terms of CONNECT; flags: MSG_EOR and MSG_CONFIRM at most, the gofer adds
 *            MSG_DONTWAIT and MSG_NOSIGNAL; with CBOX_GOFER_SENDTO_MEMFD also set, value is empty
 *            and the datagram is the whole content of a sealed memfd the packet carries after
 *            the socket, up to CBOX_GOFER_DGRAM_MAX bytes); OK body: u32 bytes sent
 *   GETXATTR, REMOVEXATTR  u32 fid, xname   (xname: u16 length + 1..255 bytes, no NUL)
 *   SETXATTR u32 fid, u32 flags (0..3: XATTR_CREATE | XATTR_REPLACE), xname, value
 *            (value: u32 length + 0..65536 bytes)
 *   LISTXATTR u32 fid
 *   WALKN    u32 dirfid, path  (path: u16 length + bytes: 1..CBOX_GOFER_WALKN_MAX names, each
 *            one WALK would take, joined by single '/'; walked name by name, as that many WALKs,
 *            stopping after a name that is not a directory (a symlink is returned as itself)
 *            or at the first name that fails)
 *   WALKDIR  u32 dirfid, u32 count (1..CBOX_GOFER_WALKDIR_MAX, or'd with CBOX_GOFER_WALKDIR_WRAP
 *            or not), name  (name and up to count - 1 entries that follow it in the directory's
 *            own listing order, each walked as a WALK of it; with WRAP, after the listing's end
 *            the entries before name follow; a directory being read entry by entry costs one
 *            round trip per batch)
 *   CLUNKN   u32 count (1..CBOX_GOFER_CLUNKN_MAX), count x u32 fid  (each released as by CLUNK;
 *            all are tried, and the reply is the error of the first that failed)
 *   WALKOPEN, WALKNOPEN  as WALK and WALKN, for a walk the sentry makes to open what it finds
 *            for reading: when the last name of the request is walked and is a regular file or
 *            a directory on a read-only mount, the gofer also opens it read-only, as an OPEN
 *            would, and the reply carries that fd (its stat, the last entry's for WALKNOPEN,
 *            has CBOX_GOFER_STAT_OPENED). Anything else, or an open that fails, is a plain
 *            WALK or WALKN reply: the sentry's OPEN then meets the error itself.
 * owner (the requests that make a node: CREATE, TMPFILE, MKDIR, MKNOD, SYMLINK, BIND): the host
 * uid and gid the new node is given. (uint32_t)-1 for either means "as the gofer created it":
 * a gid of -1 keeps the group the kernel chose, which a set-group-ID directory decides. Any
 * values decode; whether they can be applied is the gofer's answer (its chown's errno). The
 * stat of a CREATE, TMPFILE or MKNOD reply shows the owner the node was given.
 * Reply type: CBOX_GOFER_REPLY_OK | request type, or CBOX_GOFER_REPLY_ERROR {i32 errno (1..4095)}.
 * OK bodies: WALK and MKNOD u32 newfid + stat; STAT stat; STATFS statfs; READLINK target; CREATE
 * and TMPFILE u32 newfid + stat (and an fd); OPEN and VIEW empty (and an fd); GETXATTR value;
 * LISTXATTR value (the names, each ending in NUL: empty or its last byte is NUL); WALKN u32 nwalked
 * (1..CBOX_GOFER_WALKN_MAX), i32 error (0, or the errno of the name after the last one walked:
 * when the first name fails the reply is an ERROR), nwalked x struct cbox_gofer_walked; WALKDIR
 * u32 nwalked (1..CBOX_GOFER_WALKDIR_MAX), then nwalked records of struct cbox_gofer_walked and
 * a name (the first record is the name asked for; a name that fails is the reply's error); the
 * others (SETATTR, BIND, CONNECT, SETXATTR, REMOVEXATTR too) empty; SENDTO u32 bytes sent.
 * stat and statfs travel as the raw structs above (fixed layout, no padding).
 */
struct cbox_gofer_hdr {
	uint32_t type;
	uint32_t len;
	uint32_t tag;
	uint32_t pad;
};

enum cbox_gofer_type {
	CBOX_GOFER_WALK = 1,
	CBOX_GOFER_CLUNK = 2,
	CBOX_GOFER_STAT = 3,
	CBOX_GOFER_OPEN = 4,
	CBOX_GOFER_READLINK = 5,
	CBOX_GOFER_STATFS = 6,
	CBOX_GOFER_CREATE = 7,
	CBOX_GOFER_MKDIR = 8,
	CBOX_GOFER_UNLINK = 9,
	CBOX_GOFER_SYMLINK = 10,
	CBOX_GOFER_RENAME = 11,
	CBOX_GOFER_LINK = 12,
	CBOX_GOFER_SETATTR = 13,
	CBOX_GOFER_MKNOD = 14,
	CBOX_GOFER_BIND = 15,
	CBOX_GOFER_GETXATTR = 16,
	CBOX_GOFER_SETXATTR = 17,
	CBOX_GOFER_LISTXATTR = 18,
	CBOX_GOFER_REMOVEXATTR = 19,
	CBOX_GOFER_INOTIFY = 20,
	CBOX_GOFER_TMPFILE = 21,
	CBOX_GOFER_WALKN = 22,
	CBOX_GOFER_WALKDIR = 23,
	CBOX_GOFER_CLUNKN = 24,
	CBOX_GOFER_WALKOPEN = 25,
	CBOX_GOFER_WALKNOPEN = 26,
	CBOX_GOFER_CONNECT = 27,
	CBOX_GOFER_SENDTO = 28,
	CBOX_GOFER_VIEW = 29,
	CBOX_GOFER_TYPE_MAX = CBOX_GOFER_VIEW,
};

/* SETATTR's valid bits: which fields of struct cbox_gofer_setattr to apply. The gofer applies
 * them in this order (mode, owner, size, times) and stops at the first error. */
#define CBOX_GOFER_SET_MODE  1u  /* chmod: mode & 07777, setuid/setgid dropped by the gofer */
#define CBOX_GOFER_SET_UID   2u  /* chown: uid ((uint32_t)-1 = unchanged) */
#define CBOX_GOFER_SET_GID   4u  /* chown: gid ((uint32_t)-1 = unchanged) */
#define CBOX_GOFER_SET_SIZE  8u  /* truncate (regular files only) */
#define CBOX_GOFER_SET_TIMES 16u /* utimensat: nsec may be UTIME_NOW or UTIME_OMIT */
#define CBOX_GOFER_SET_ALL   31u
/* Not an attribute: the call named the file by a path the sentry had cached. If the fid's name in
 * its parent no longer leads to its file (the host replaced or removed it), nothing is changed
 * and the reply is ESTALE, so that the path is walked again. Without it (fchmod of an open fd)
 * the fid's own file is changed, named or not. */
#define CBOX_GOFER_SET_BY_NAME 32u

/* The arguments of SETATTR; fields whose bit is not in valid are sent but not used. */
struct cbox_gofer_setattr {
	uint32_t valid;
	uint32_t mode;
	uint32_t uid;
	uint32_t gid;
	int64_t size;
	int64_t atime_sec, atime_nsec;
	int64_t mtime_sec, mtime_nsec;
};

#define CBOX_GOFER_REPLY_OK    0x80u /* OR-ed with the request type */
#define CBOX_GOFER_REPLY_ERROR 0xffu

#define CBOX_GOFER_NAME_MAX     255u   /* bytes of one path component */
#define CBOX_GOFER_TARGET_MAX   4095u  /* bytes of a symlink target (PATH_MAX - 1) */
#define CBOX_GOFER_SOCKPATH_MAX 108u   /* bytes of an AF_UNIX sun_path (UNIX_PATH_MAX) */
#define CBOX_GOFER_XNAME_MAX    255u   /* bytes of an xattr name (XATTR_NAME_MAX) */
#define CBOX_GOFER_XVALUE_MAX   65536u /* bytes of an xattr value or list (XATTR_SIZE_MAX) */
/* SENDTO: the datagram comes in a memfd beside the socket (more than CBOX_GOFER_XVALUE_MAX bytes,
 * at most CBOX_GOFER_DGRAM_MAX: Linux takes a datagram up to the socket's send buffer, 208 KiB by
 * default, 2 x net.core.wmem_max at most). */
#define CBOX_GOFER_SENDTO_MEMFD 0x80000000u
#define CBOX_GOFER_DGRAM_MAX    (4u << 20)
/* Bytes of the largest valid packet, rounded up; a receive buffer of this size never truncates
 * a valid message (a SETXATTR with the largest name and value is the largest). */
#define CBOX_GOFER_MSG_MAX (CBOX_GOFER_XVALUE_MAX + 4096u)

/* The most names one WALKN takes: a cold lookup of a deep path costs one round trip, not one per
 * component. */
#define CBOX_GOFER_WALKN_MAX 16u

/* The most entries one WALKDIR returns. Its largest reply (every name 255 bytes) is under
 * CBOX_GOFER_MSG_MAX. */
#define CBOX_GOFER_WALKDIR_MAX 128u
/* A bit of WALKDIR's count word: after the end of the listing, go on from its start up to the
 * name, so that the batch covers the whole directory (up to count) whatever name it starts at. */
#define CBOX_GOFER_WALKDIR_WRAP 0x80000000u

/* The most fids one CLUNKN releases (the sentry lets go of cached entries a thousand at a time). */
#define CBOX_GOFER_CLUNKN_MAX 1024u

/* One name walked by WALKN, as it travels: its new fid and its stat (pad is 0). */
struct cbox_gofer_walked {
	uint32_t fid;
	uint32_t pad;
	struct cbox_gofer_stat stat;
};

/*
 * A decoded request. name/target point into the decoded buffer (not NUL-terminated) and live
 * as long as it does. Unused fields are 0/NULL.
 */
struct cbox_gofer_req {
	uint32_t type; /* enum cbox_gofer_type */
	uint32_t tag;
	uint32_t cpu;  /* the header's pad: the sender's CPU + 1, 0 for none (a hint) */
	uint32_t fid;  /* WALK/CREATE/TMPFILE/MKDIR/UNLINK/SYMLINK/MKNOD dirfid; RENAME olddir; BIND
	                  cwdfid; others (CONNECT too) fid */
	uint32_t fid2; /* RENAME newdir; LINK dirfid; CONNECT, SENDTO dirfid */
	uint32_t flags;    /* OPEN, CREATE, TMPFILE: open(2) flags; UNLINK: isdir; SETXATTR: xattr
	                      flags; WALKDIR: count; SENDTO: send(2) flags */
	uint32_t mode;     /* CREATE, TMPFILE, MKDIR, MKNOD (type and permission bits); BIND (0777
	                      at most) */
	uint32_t uid, gid; /* CREATE, TMPFILE, MKDIR, MKNOD, SYMLINK, BIND: the new node's host
	                      owner, (uint32_t)-1 = as the gofer created it (see "owner" above) */
	const char *name;  /* WALK, CREATE..LINK, MKNOD entry name; RENAME oldname */
	size_t name_len;
	const char *name2; /* RENAME newname; SYMLINK target; BIND, CONNECT, SENDTO sockpath; *XATTR
	                      xname; WALKN path */
	size_t name2_len;
	struct cbox_gofer_setattr attr; /* SETATTR */
	const void *value;              /* SETXATTR value; SENDTO the datagram; CLUNKN the fids (see
	                                   cbox_gofer_req_fid) */
	size_t value_len;               /* CLUNKN: the count of fids */
};

/* A decoded reply. stat/statfs are copies; target points into the decoded buffer. */
struct cbox_gofer_reply {
	uint32_t type; /* CBOX_GOFER_REPLY_OK | request type, or CBOX_GOFER_REPLY_ERROR */
	uint32_t tag;
	int32_t error;                   /* REPLY_ERROR: the positive errno */
	uint32_t fid;                    /* WALK, CREATE, TMPFILE, MKNOD: the new fid */
	struct cbox_gofer_stat stat;     /* WALK, CREATE, TMPFILE, MKNOD, STAT */
	struct cbox_gofer_statfs statfs; /* STATFS */
	const char *target;              /* READLINK, not NUL-terminated */
	size_t target_len;
	const void *value; /* GETXATTR value, LISTXATTR names; into the decoded buffer */
	size_t value_len;
	uint32_t nwalked;   /* WALKN, WALKDIR: entries in walked */
	int32_t walk_error; /* WALKN: 0, or the positive errno of the name after the last walked */
	const void *walked; /* WALKN: nwalked struct cbox_gofer_walked, unaligned (see below);
	                       WALKDIR: the records, walked_len bytes (cbox_gofer_reply_dirent) */
	size_t walked_len;
};

/*
 * Check one path component: 1..255 bytes, no '/' or NUL, not "." or "..".
 * Returns 0, -ENAMETOOLONG when too long, -EINVAL otherwise. Pure.
 */
CBOX_API int cbox_gofer_check_name(const char *name, size_t len);

/* Check a WALKN path: 1..CBOX_GOFER_WALKN_MAX names that each pass cbox_gofer_check_name,
 * joined by single '/' (none leading or trailing). Returns the number of names, -ENAMETOOLONG
 * (a name too long, or the path longer than CBOX_GOFER_TARGET_MAX) or -EINVAL. Pure. */
CBOX_API int cbox_gofer_check_walk_path(const char *path, size_t len);

/* Copy entry i (< r->nwalked) of a WALKN reply out of the packet, where it may be unaligned. */
CBOX_API void cbox_gofer_reply_walked(const struct cbox_gofer_reply *r, uint32_t i,
                                      struct cbox_gofer_walked *out);

/*
 * Read the next record of a WALKDIR reply, starting at *off (0 for the first): its entry (copied
 * out, it may be unaligned) and its name (into the packet, not NUL-terminated). Returns 0 and
 * advances *off, or -ENOENT after the last record. The decoder has checked every record.
 */
CBOX_API int cbox_gofer_reply_dirent(const struct cbox_gofer_reply *r, size_t *off,
                                     struct cbox_gofer_walked *out, const char **name,
                                     size_t *name_len);

/* Fid i (< q->value_len) of a CLUNKN request, which may be unaligned in the packet. */
CBOX_API uint32_t cbox_gofer_req_fid(const struct cbox_gofer_req *q, size_t i);

/* Append one WALKDIR record (w, then name) to the records in buf (size bytes, *len used).
 * Returns 0, or -ENOBUFS when it does not fit (nothing is written). Pure. */
CBOX_API int cbox_gofer_put_dirent(void *buf, size_t size, size_t *len,
                                   const struct cbox_gofer_walked *w, const char *name,
                                   size_t name_len);

/* Check a symlink target: 1..4095 bytes, no NUL. Returns 0, -ENAMETOOLONG or -EINVAL. Pure. */
CBOX_API int cbox_gofer_check_target(const char *target, size_t len);

/* Check an AF_UNIX socket path (BIND): 1..108 bytes, no NUL. Returns 0, -ENAMETOOLONG or
 * -EINVAL. Pure. */
CBOX_API int cbox_gofer_check_sockpath(const char *path, size_t len);

/* Check an xattr name: 1..255 bytes, no NUL. Returns 0, -ERANGE (empty or too long, Linux's
 * answer) or -EINVAL. The namespace (prefix) is the server's and the sentry's check. Pure. */
CBOX_API int cbox_gofer_check_xname(const char *name, size_t len);

/*
 * Decode one request packet of len bytes. On success fills *out (pointing into buf) and
 * returns 0. Errors: -EPROTO when the packet is shorter than the header, the header's len is not
 * the packet length or the type is unknown; -EINVAL when the body has the wrong length for its
 * type or a name/target/field is invalid (see cbox_gofer_check_name, cbox_gofer_check_sockpath,
 * cbox_gofer_check_xname and the rules in the table above). Never reads outside
 * buf[0, len). Pure; buf may be any bytes.
 */
CBOX_API int cbox_gofer_decode_request(const void *buf, size_t len, struct cbox_gofer_req *out);

/*
 * Encode req into buf (size bytes). Fields not used by req->type are ignored. Returns the packet
 * length, -EINVAL for an unknown type or invalid name/target/isdir/SETATTR field (the decoder's
 * rules), -ENAMETOOLONG for a name or
 * target too long, -ENOBUFS when size is too small. A packet it produces always decodes back.
 */
CBOX_API int cbox_gofer_encode_request(const struct cbox_gofer_req *req, void *buf, size_t size);

/*
 * Decode one reply packet. Same checks and errors as cbox_gofer_decode_request: the type must be
 * REPLY_ERROR (errno 1..4095) or REPLY_OK of a known request type with that type's body length;
 * a READLINK target must pass cbox_gofer_check_target, a GETXATTR value or LISTXATTR list must be
 * at most CBOX_GOFER_XVALUE_MAX bytes (a list empty or ending in NUL); a WALKN reply has 1..
 * CBOX_GOFER_WALKN_MAX entries with pad 0 and a known stat flag, and an error of 0 or 1..4095;
 * a WALKDIR reply 1..CBOX_GOFER_WALKDIR_MAX records, each with pad 0, a known stat flag and a
 * name that passes cbox_gofer_check_name.
 * Whether the reply answers the request the caller sent (tag, type, a WALKN's count against its
 * names) is the caller's check. Pure.
 */
CBOX_API int cbox_gofer_decode_reply(const void *buf, size_t len, struct cbox_gofer_reply *out);

/* Encode rep into buf. Returns the packet length, -EINVAL for an invalid type/errno/target,
 * -ENOBUFS when size is too small. */
CBOX_API int cbox_gofer_encode_reply(const struct cbox_gofer_reply *rep, void *buf, size_t size);
