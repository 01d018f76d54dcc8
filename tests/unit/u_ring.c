/* The SPSC ring (shm/ring.h): records of every size through many laps,
 * wrap-around with SKIP records, full-ring back-pressure, the lazy consumer
 * position, and rejection of corrupt bytes written by a faulty peer. */
#include "shm/ring.h"

#include <stdio.h>
#include <stdlib.h>

#include "u_check.h"

enum { NCELLS = 64 };

static void *ring_mem(void)
{
    void *m = aligned_alloc(64, vmpi_ring_bytes(NCELLS));
    vmpi_ring_init(m, NCELLS);
    return m;
}

static unsigned char pattern(uint64_t msg, size_t i)
{
    return (unsigned char)(msg * 131 + i * 7 + 1);
}

/* Random sizes through many laps; the consumer drains only sometimes, so
 * the ring fills, wraps and pads. Every byte must arrive in order. */
static void test_stream(void)
{
    void *m = ring_mem();
    struct vmpi_ring_tx tx;
    struct vmpi_ring_rx rx;
    vmpi_ring_tx_attach(&tx, m, NCELLS);
    vmpi_ring_rx_attach(&rx, m, NCELLS);
    uint64_t sent = 0, got = 0, fulls = 0;
    srand(7);
    size_t maxlen = vmpi_ring_max_len(NCELLS);
    size_t len_of[4096];
    while (got < 20000) {
        int produce = rand() % 3;
        while (produce-- > 0 && sent < 20000) {
            size_t len = (size_t)rand() % (maxlen + 1);
            if (rand() % 2)
                len %= 120;
            unsigned char *p = vmpi_ring_reserve(&tx, len);
            if (!p) {
                fulls++;
                break;
            }
            for (size_t i = 0; i < len; i++)
                p[i] = pattern(sent, i);
            vmpi_ring_commit(&tx, len);
            len_of[sent % 4096] = len;
            sent++;
        }
        int consume = rand() % 4;
        while (consume-- > 0) {
            const void *d;
            size_t len;
            int st = vmpi_ring_peek(&rx, &d, &len);
            CHECK(st != VMPI_RING_CORRUPT, "corrupt at message %llu", (unsigned long long)got);
            if (st != VMPI_RING_OK)
                break;
            CHECK(len == len_of[got % 4096], "message %llu: length %zu, sent %zu",
                   (unsigned long long)got, len, len_of[got % 4096]);
            const unsigned char *b = d;
            for (size_t i = 0; i < len; i++)
                if (b[i] != pattern(got, i)) {
                    CHECK(0, "message %llu byte %zu differs", (unsigned long long)got, i);
                    break;
                }
            vmpi_ring_release(&rx, len);
            got++;
        }
        if (failures)
            break;
    }
    CHECK(fulls > 0, "the ring never filled up; back-pressure untested");
    CHECK(sent == got, "sent %llu, received %llu", (unsigned long long)sent,
           (unsigned long long)got);
    free(m);
}

/* A full ring refuses a record until the consumer releases space, and an
 * idle consumer publishes its position so a large record fits again. */
static void test_full_and_publish(void)
{
    void *m = ring_mem();
    struct vmpi_ring_tx tx;
    struct vmpi_ring_rx rx;
    vmpi_ring_tx_attach(&tx, m, NCELLS);
    vmpi_ring_rx_attach(&rx, m, NCELLS);
    int n = 0;
    while (vmpi_ring_reserve(&tx, 0)) {
        vmpi_ring_commit(&tx, 0);
        n++;
    }
    CHECK(n == NCELLS, "%d one-cell records fit, expected %d", n, NCELLS);
    const void *d;
    size_t len;
    for (int i = 0; i < n; i++) {
        CHECK(vmpi_ring_peek(&rx, &d, &len) == VMPI_RING_OK && len == 0, "record %d", i);
        vmpi_ring_release(&rx, len);
    }
    CHECK(vmpi_ring_peek(&rx, &d, &len) == VMPI_RING_EMPTY, "ring not empty");
    size_t big = vmpi_ring_max_len(NCELLS);
    CHECK(vmpi_ring_reserve(&tx, big) != NULL, "largest record refused by an empty ring");
    free(m);
}

/* Bytes a faulty VM could write: a length past the ring, a SKIP at cell 0,
 * and payload bytes that look like the next header. */
static void test_corrupt(void)
{
    void *m = ring_mem();
    struct vmpi_ring_tx tx;
    struct vmpi_ring_rx rx;
    vmpi_ring_tx_attach(&tx, m, NCELLS);
    vmpi_ring_rx_attach(&rx, m, NCELLS);
    struct vmpi_ring_cell *cells = tx.cells;
    const void *d;
    size_t len;

    cells[0].len = 1u << 20;
    atomic_store(&cells[0].seq, 1);
    CHECK(vmpi_ring_peek(&rx, &d, &len) == VMPI_RING_CORRUPT, "oversized length accepted");

    cells[0].len = VMPI_RING_SKIP;
    CHECK(vmpi_ring_peek(&rx, &d, &len) == VMPI_RING_CORRUPT, "SKIP at cell 0 accepted");

    /* A two-cell record whose payload, in the seq word of cell 1, holds
     * the value a header at cell 1 will carry one lap later (abs cell 65). */
    vmpi_ring_init(m, NCELLS);
    vmpi_ring_tx_attach(&tx, m, NCELLS);
    vmpi_ring_rx_attach(&rx, m, NCELLS);
    unsigned char *p = vmpi_ring_reserve(&tx, 100);
    memset(p, 0, 100);
    uint32_t lookalike = NCELLS + 2;
    memcpy(p + 56, &lookalike, sizeof lookalike);
    vmpi_ring_commit(&tx, 100);
    CHECK(vmpi_ring_peek(&rx, &d, &len) == VMPI_RING_OK && len == 100, "two-cell record");
    vmpi_ring_release(&rx, len);
    CHECK(atomic_load(&cells[1].seq) == 0, "continuation cell not cleared on release");
    /* Walk one lap of one-cell records up to absolute cell 65 (cell 1). */
    for (int i = 2; i < NCELLS + 1; i++) {
        CHECK(vmpi_ring_reserve(&tx, 0) != NULL, "ring full at cell %d", i);
        vmpi_ring_commit(&tx, 0);
        CHECK(vmpi_ring_peek(&rx, &d, &len) == VMPI_RING_OK, "record at cell %d", i);
        vmpi_ring_release(&rx, len);
    }
    CHECK(vmpi_ring_peek(&rx, &d, &len) == VMPI_RING_EMPTY,
           "payload bytes from the last lap read as a header");
    free(m);
}

int main(void)
{
    test_stream();
    test_full_and_publish();
    test_corrupt();
    if (failures) {
        fprintf(stderr, "u_ring: %d failure(s)\n", failures);
        return 1;
    }
    printf("u_ring: ok\n");
    return 0;
}
