#pragma once
/* Network interfaces of the caller's network namespace (netif.c). */

/* Bring the loopback interface up, unless it is up already (a namespace the caller joined, such
 * as Docker's, which it may not change): 0, or -errno. */
int cbox_loopback_up(void);
