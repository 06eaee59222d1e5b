#pragma once
/*
 * A guest task's credentials, kept by the sentry: the user and group ids (real, effective,
 * saved, file system), the supplementary groups, and the few capabilities the sentry enforces.
 * The guest's host credentials never change (it stays the one id its user namespace maps);
 * these are what get*id, /proc/PID/status and every permission check the sentry makes see.
 *
 * Two id spaces (struct cbox_cred.all_ids):
 *   - one host id (cbox-run): every guest id stands for the one host id the sandbox's user
 *     namespace maps. Any id but (uint32_t)-1 and CBOX_UNMAPPED_ID is valid, as in a container
 *     that maps them all; the owners the guest gives files are the sentry's to remember
 *     (sentry/owners.c), and file owners other than the sandbox's own host id are
 *     CBOX_UNMAPPED_ID, shown as 65534, to which no capability applies.
 *   - all ids (the OCI runtime run as root): guest ids are host ids, as under runc without a
 *     user namespace; the gofer gives new files the creator's ids.
 *
 * Capabilities: only those the sentry checks are emulated (CBOX_CAP_EMULATED); the sets follow
 * Linux's rules for a process that does not use file capabilities, securebits or ambient
 * capabilities: uid 0 gets the bounding set at exec, changing ids away from 0 drops them as
 * cap_emulate_setxuid does, PR_SET_KEEPCAPS keeps the permitted set across that.
 *
 * Credentials are shared (refs) and copied on write: each set function replaces *cp with a
 * private copy when others hold it. Errors leave *cp as it was.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/capability.h>
#include "cbox/compiler.h"

#define CBOX_CAP_BIT(n) (1ULL << (n))
/* CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER, CAP_FSETID, CAP_KILL,
 * CAP_SETGID, CAP_SETUID: the ones the sentry's checks consult. */
#define CBOX_CAP_EMULATED                                                                          \
	(CBOX_CAP_FS_MASK | CBOX_CAP_BIT(CAP_KILL) | CBOX_CAP_BIT(CAP_SETGID) |                    \
	 CBOX_CAP_BIT(CAP_SETUID))
/* The file system capabilities that follow the fs uid (Linux's CAP_FS_MASK, as emulated). */
#define CBOX_CAP_FS_MASK                                                                           \
	(CBOX_CAP_BIT(CAP_CHOWN) | CBOX_CAP_BIT(CAP_DAC_OVERRIDE) |                                \
	 CBOX_CAP_BIT(CAP_DAC_READ_SEARCH) | CBOX_CAP_BIT(CAP_FOWNER) | CBOX_CAP_BIT(CAP_FSETID))
#define CBOX_NGROUPS_MAX 65536 /* Linux's NGROUPS_MAX */
#define CBOX_OVERFLOW_ID 65534 /* what an unmapped owner shows as */
/* With one host id, the owner of a file of another host user, as the sentry keeps it: no guest
 * id is ever it (cbox_cred_id_valid), so neither the owner's bits nor a capability applies to
 * such a file; the guest sees CBOX_OVERFLOW_ID (cbox_id_shown). */
#define CBOX_UNMAPPED_ID 0xfffffffeu

struct cbox_cred {
	int refs;
	uint32_t uid, euid, suid, fsuid;
	uint32_t gid, egid, sgid, fsgid;
	uint64_t cap_inh, cap_prm, cap_eff, cap_bnd;
	bool keepcaps; /* PR_SET_KEEPCAPS */
	bool all_ids;  /* guest ids are host ids (see above); else one host id */
	uint32_t ngroups;
	uint32_t groups[]; /* sorted; duplicates kept, as Linux keeps them */
};

/*
 * New credentials for a process that starts with uid/gid and groups (n, any order), as after an
 * exec: uid 0 gets bset (masked to CBOX_CAP_EMULATED) as permitted and effective, any other uid
 * none. Returns NULL on ENOMEM. Preconditions: n <= CBOX_NGROUPS_MAX; every id valid
 * (cbox_cred_id_valid).
 */
CBOX_API struct cbox_cred *cbox_cred_new(uint32_t uid, uint32_t gid, const uint32_t *groups,
                                         size_t n, uint64_t bset, bool all_ids);
CBOX_API struct cbox_cred *cbox_cred_get(struct cbox_cred *c);
CBOX_API void cbox_cred_put(struct cbox_cred *c); /* NULL-safe */

/* Whether id is a guest id ((uint32_t)-1 never is, nor with one host id CBOX_UNMAPPED_ID). */
CBOX_API bool cbox_cred_id_valid(const struct cbox_cred *c, uint32_t id);
/* Whether cap (a CAP_* number) is in the effective set. */
CBOX_API bool cbox_cred_capable(const struct cbox_cred *c, int cap);
/* Whether gid is the fs gid or a supplementary group. */
CBOX_API bool cbox_cred_in_group(const struct cbox_cred *c, uint32_t gid);

/*
 * Linux's generic_permission for a file of mode/uid/gid (as the guest sees them): mask is of
 * R_OK, W_OK, X_OK. The owner's, else the group's, else the others' bits, then
 * CAP_DAC_READ_SEARCH and CAP_DAC_OVERRIDE. Returns 0 or -EACCES.
 */
CBOX_API int cbox_cred_permission(const struct cbox_cred *c, uint32_t mode, uint32_t uid,
                                  uint32_t gid, int mask);
/* Whether sender may signal a task with credentials target (Linux's kill_ok_by_cred): its real
 * or effective uid is the target's real or saved uid, or it has CAP_KILL. (SIGCONT within a
 * session is the caller's to check.) */
CBOX_API bool cbox_cred_may_signal(const struct cbox_cred *sender, const struct cbox_cred *target);
/* Linux's __ptrace_may_access on ids alone (the target's dumpable flag is the caller's to
 * check): the caller's fs ids (fscreds: PTRACE_MODE_FSCREDS) or real ids are each of the
 * target's real, effective and saved ids, or it has CAP_SYS_PTRACE. */
CBOX_API bool cbox_cred_may_ptrace(const struct cbox_cred *caller, const struct cbox_cred *target,
                                   bool fscreds);
/* Linux's check_prlimit_permission (prlimit64 on another task): real ids as above, or
 * CAP_SYS_RESOURCE. */
CBOX_API bool cbox_cred_may_prlimit(const struct cbox_cred *caller, const struct cbox_cred *target);
/* Linux's check_same_owner, which guards the scheduler's settings of another task (affinity,
 * policy, nice value): the caller's effective uid is the target's effective or real uid, or it
 * has CAP_SYS_NICE. */
CBOX_API bool cbox_cred_same_owner(const struct cbox_cred *caller, const struct cbox_cred *target);
/* Whether the caller may act as the owner of a file owned by uid (Linux's inode_owner_or_capable).
 */
CBOX_API bool cbox_cred_owner(const struct cbox_cred *c, uint32_t uid);
/* Whether cap is effective for a file owned by uid:gid (Linux's capable_wrt_inode_uidgid: no
 * capability applies to an unmapped owner). */
CBOX_API bool cbox_cred_capable_wrt(const struct cbox_cred *c, int cap, uint32_t uid, uint32_t gid);

/* The set*id calls, with Linux's checks and results: (uint32_t)-1 means "unchanged" where the
 * call allows it. Errors: -EINVAL (an unmapped id), -EPERM, -ENOMEM. */
CBOX_API int cbox_cred_setuid(struct cbox_cred **cp, uint32_t uid);
CBOX_API int cbox_cred_setreuid(struct cbox_cred **cp, uint32_t r, uint32_t e);
CBOX_API int cbox_cred_setresuid(struct cbox_cred **cp, uint32_t r, uint32_t e, uint32_t s);
CBOX_API int cbox_cred_setgid(struct cbox_cred **cp, uint32_t gid);
CBOX_API int cbox_cred_setregid(struct cbox_cred **cp, uint32_t r, uint32_t e);
CBOX_API int cbox_cred_setresgid(struct cbox_cred **cp, uint32_t r, uint32_t e, uint32_t s);
/* setfsuid/setfsgid: return the previous fs id; change it only when allowed (never an error,
 * as Linux; on ENOMEM nothing changes). */
CBOX_API uint32_t cbox_cred_setfsuid(struct cbox_cred **cp, uint32_t id);
CBOX_API uint32_t cbox_cred_setfsgid(struct cbox_cred **cp, uint32_t id);
/* setgroups: CAP_SETGID (-EPERM), n <= CBOX_NGROUPS_MAX (-EINVAL), each id mapped (-EINVAL). */
CBOX_API int cbox_cred_setgroups(struct cbox_cred **cp, const uint32_t *groups, size_t n);
/* capset: effective within the new permitted within the old permitted, inheritable within the
 * old inheritable or permitted and the bounding set (-EPERM). */
CBOX_API int cbox_cred_capset(struct cbox_cred **cp, uint64_t eff, uint64_t prm, uint64_t inh);
CBOX_API int cbox_cred_set_keepcaps(struct cbox_cred **cp, bool on);
/* The credentials access(2) checks with (Linux's access_override_creds): the fs ids are the
 * real ones, and the effective capabilities the permitted ones for real uid 0, none otherwise.
 * A new reference (c itself when nothing differs); NULL on ENOMEM. */
CBOX_API struct cbox_cred *cbox_cred_for_access(struct cbox_cred *c);
/* What an exec does to credentials (no set-id bits, no file capabilities): saved and fs ids
 * follow the effective ones, uid 0 regains the bounding set, PR_SET_KEEPCAPS is cleared. */
CBOX_API int cbox_cred_exec(struct cbox_cred **cp);
