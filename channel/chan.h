/* The contract between core/ and a channel (smp, ivshmem, ofi).
 *
 * core/ owns matching and decides eager vs rendezvous; a channel moves
 * packets and bulk data to one peer. Every packet starts with struct
 * vmpi_hdr. Core packet types are below 16; a channel's own control packets
 * (CTS, FIN, ...) use 16 and up and never reach core/. */
#ifndef VMPI_CHANNEL_CHAN_H
#define VMPI_CHANNEL_CHAN_H

#include "../core/vmpi.h"

#include <assert.h>

enum vmpi_pkt_type {
    VMPI_PKT_EAGER = 1, /* payload: the packed message ([cookie] first if SYNC) */
    VMPI_PKT_RTS = 2,   /* payload: the channel's rendezvous info */
    VMPI_PKT_ACK = 3,   /* payload: u64 sender cookie; a sync send was matched */
    VMPI_PKT_CHAN = 16  /* first channel-private type */
};
enum { VMPI_HF_SYNC = 1 }; /* the sender wants an ACK when matched */

/* On the wire (and in shared memory) in this exact layout. */
struct vmpi_hdr {
    uint8_t type;
    uint8_t flags;
    uint16_t rsvd;
    int32_t src; /* sender's rank in the communicator */
    int32_t tag;
    uint32_t ctx;
    uint64_t len; /* message bytes (packed) */
};
static_assert(sizeof(struct vmpi_hdr) == 24, "packet header is 24 bytes");

struct vmpi_chan {
    const char *name;
    /* Sends a packet whose payload is len contiguous bytes at buf: 0, or 1
     * when there is no room now. */
    int (*send)(void *cstate, const struct vmpi_hdr *h, const void *buf, size_t len);
    /* Room for a packet carrying paylen bytes after the header; returns
     * where the payload goes, or NULL when there is no room now. */
    void *(*reserve)(void *cstate, size_t paylen);
    /* Publishes the reserved packet. */
    void (*commit)(void *cstate, const struct vmpi_hdr *h, size_t paylen);
    /* Sends a small packet now or later, preserving order; never fails. */
    void (*send_ctl)(void *cstate, const struct vmpi_hdr *h, const void *pay, size_t paylen);
    /* Sender side of a rendezvous: announce sreq (its data is
     * vmpi_req_sdata(sreq), sreq->len bytes). Returns 0, or 1 when there is
     * no room now (core retries). The channel completes sreq when the data
     * has left its buffer. */
    int (*rndv_send)(void *cstate, struct vmpi_req *sreq, const struct vmpi_hdr *h);
    /* Receiver side: rreq matched a rendezvous whose RTS payload is info.
     * The channel moves the data with vmpi_req_deliver() and completes rreq. */
    void (*rndv_recv)(void *cstate, struct vmpi_req *rreq, const void *info, size_t infolen);
    /* Polls for incoming packets and advances transfers; returns events. */
    int (*poll)(void);
    /* True while packets or transfers are still queued in the channel. */
    bool (*busy)(void);
    void (*finalize)(void);
};

/* Core entry for a packet that arrived from world rank src. Returns 0 when
 * consumed, VMPI_MATCHED when it matched a posted receive, or VMPI_AGAIN
 * when core cannot take it now (the channel keeps it and stops reading that
 * peer until the next poll). After VMPI_MATCHED the channel should return
 * to its caller rather than look for more: a waiting rank's reply must not
 * queue behind the cache miss of polling the next, still-empty cell. */
#define VMPI_AGAIN 1
#define VMPI_MATCHED 2
int vmpi_core_incoming(int src, const struct vmpi_hdr *h, const void *pay, size_t paylen);

/* Where a send request's packed data is (contiguous): user memory or tmp. */
const void *vmpi_req_sdata(const struct vmpi_req *sreq);
/* Stores len packed bytes at offset off of rreq's message into its buffer;
 * bytes beyond the receive capacity are dropped (truncation is recorded). */
void vmpi_req_deliver(struct vmpi_req *rreq, size_t off, const void *src, size_t len);
/* A contiguous destination for the first n bytes of rreq's message, or NULL
 * if the receive buffer is not contiguous (then use vmpi_req_deliver). */
void *vmpi_req_rdata(struct vmpi_req *rreq, size_t *n);
/* Records the received size and completes rreq. */
void vmpi_req_recv_done(struct vmpi_req *rreq);

extern const struct vmpi_chan vmpi_smp_chan;
extern const struct vmpi_chan vmpi_ivshmem_chan;
extern const struct vmpi_chan vmpi_ofi_chan;

#endif
