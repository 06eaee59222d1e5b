/* Leak checks in sanitizer builds (see cbox/sanitizer.h). */
#include "cbox/sanitizer.h"

#ifdef CBOX_ASAN
#include <sanitizer/lsan_interface.h>
#endif

bool cbox_leak_check(void)
{
#ifdef CBOX_ASAN
	/* The recoverable form: the caller says whose leaks they were and chooses its status,
	 * instead of LeakSanitizer's own exit with ASan's exit code. */
	return __lsan_do_recoverable_leak_check() != 0;
#else
	return false;
#endif
}
