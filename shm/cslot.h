/* Collective slots: one per rank of a node, in the memory every rank of
 * that node maps (the VM's smp segment, or the job's area in the host
 * region when the node spans VMs). The node collectives of coll/node.c pass
 * data through them: a rank publishes into its own slot, the others read.
 *
 * Layout (VMPI_CSLOT_BYTES, page-aligned in both segment and area):
 *
 *   0        flag[0], flag[1]   (128 bytes each: tag line, ack line)
 *   4096     data[0]            (VMPI_CSLOT_HALF bytes)
 *   4096+H   data[1]
 *
 * Protocol, per half h: tag 0 means free. The owner waits for tag 0, fills
 * data[h], then stores a nonzero tag (release) that names the collective
 * and the step; it knows how many readers the step has, and so does every
 * reader. A reader waits for the tag it expects (acquire), reads, and adds
 * 1 to ack; the reader that brings ack to the reader count stores ack 0 and
 * then tag 0 (release), handing the half back. Only the owner writes data
 * and a nonzero tag, only readers write ack and the zero tag.
 *
 * Nothing read from a slot is used as an offset, length or index: sizes
 * come from the caller's arguments, so a slot that another VM scribbles on
 * can corrupt the result or stall the collective, never the process. */
#ifndef VMPI_SHM_CSLOT_H
#define VMPI_SHM_CSLOT_H

#include <assert.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* 256 KiB: a node Alltoall of 64 KiB per rank among 16 ranks moves its
 * blocks in 4 lockstep rounds instead of 8 (19 % faster than 128 KiB
 * halves; Bcast and Allgather of 1 MiB 24-30 %, Allreduce of 256 KiB
 * 15-32 %, at 16 ranks in 4 VMs and 4 in 2), for 516 KiB per rank. */
#define VMPI_CSLOT_HALF (256u * 1024u)
#define VMPI_CSLOT_BYTES (4096u + 2u * VMPI_CSLOT_HALF)

struct vmpi_cslot_flag {
    _Atomic uint64_t tag; /* 0 free, else the live step's tag */
    char pad0[56];
    _Atomic uint32_t ack; /* readers done with the live step */
    char pad1[60];
};

struct vmpi_cslot {
    struct vmpi_cslot_flag flag[2];
    char pad[4096 - 2 * sizeof(struct vmpi_cslot_flag)];
    char data[2][VMPI_CSLOT_HALF];
};
static_assert(sizeof(struct vmpi_cslot_flag) == 128, "tag and ack on their own cache lines");
static_assert(offsetof(struct vmpi_cslot, data) == 4096, "slot data starts on a page");
static_assert(sizeof(struct vmpi_cslot) == VMPI_CSLOT_BYTES, "slot size is the documented one");
static_assert(VMPI_CSLOT_BYTES % 4096 == 0, "slots are whole pages");

#endif
