/* The channel list: every channel of the build, in order of preference
 * (the coordinator gives a pair of ranks the first allowed channel that
 * reaches it). A new channel is one folder under channel/ and one entry
 * here. */
#include "chan.h"

#define VMPI_CHANNEL_LIST(X) X(smp) X(ivshmem) X(ofi)

#define VMPI_CHANNEL_DECL(name) extern const struct vmpi_chan vmpi_##name##_chan;
#define VMPI_CHANNEL_ENTRY(name) &vmpi_##name##_chan,
VMPI_CHANNEL_LIST(VMPI_CHANNEL_DECL)
const struct vmpi_chan *const vmpi_channels[] = {VMPI_CHANNEL_LIST(VMPI_CHANNEL_ENTRY) NULL};

atomic_bool vmpi_chan_mt;
