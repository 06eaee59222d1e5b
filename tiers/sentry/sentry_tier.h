#pragma once
/* The sentry tier's ops, registered in tiers/tier.c. */
#include "cbox/tier.h"

/*
 * The sentry tier through the OCI runtime: `create` starts a sandbox monitor (the container's
 * pid: parent of the gofer and the sentry, holder of the network namespace, signal forwarder),
 * the gofer and the sentry, from config.json; the guest's program starts when `start` opens
 * <state>/exec.fifo. Refuses what the sentry cannot honour (process.user other than 0:0, mount
 * types other than bind and tmpfs outside /proc, /sys and /dev) with a message.
 */
extern const struct cbox_tier_ops cbox_tier_sentry;
