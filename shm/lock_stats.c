/* The lock library's counter (include/vmpi/lock.h): apart from shm/lock.c,
 * which is over its size budget. Atomic because lock waiters may be
 * threads; it is bumped only on the way to a park, which costs far more. */
#include "vmpi/lock.h"

_Atomic uint64_t vmpi_lock_parks;
