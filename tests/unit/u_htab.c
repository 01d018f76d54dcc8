/* Unit test of base/htab.c, the handle tables: indexes from 1 up, each
 * object found at its index across the table's own slots and the chunks
 * that double after them; a slot's address stays put while the table
 * grows (what lets a lookup run beside an add); freed indexes come back
 * and read as empty meanwhile; out-of-range and 0 read as empty. A second
 * thread looks up the first indexes while the main thread adds 200,000
 * (make test-tsan runs this test under ThreadSanitizer). Exits non-zero
 * on any failure. */
#include "../../base/base.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "u_check.h"

#define N 200000
static struct vmpi_htab t;
static atomic_int adding = 1;
static int looked_wrong;

static void *obj(uint32_t i)
{
    return (void *)(uintptr_t)(i * 16u + 8u);
}

static void *reader(void *arg)
{
    (void)arg;
    while (atomic_load(&adding))
        for (uint32_t i = 1; i <= 64; i++)
            if (vmpi_htab_get(&t, i) != obj(i))
                looked_wrong++;
    return NULL;
}

int main(void)
{
    CHECK(vmpi_htab_get(&t, 0) == NULL && vmpi_htab_get(&t, 5) == NULL, "empty table");
    for (uint32_t i = 1; i <= 64; i++) {
        uint32_t idx = 0;
        CHECK(vmpi_htab_add(&t, obj(i), &idx) == 0 && idx == i, "add %u gave %u", i, idx);
    }
    pthread_t th;
    CHECK(pthread_create(&th, NULL, reader, NULL) == 0, "pthread_create");
    void *const *early = NULL;
    for (uint32_t i = 65; i <= N; i++) {
        uint32_t idx = 0;
        CHECK(vmpi_htab_add(&t, obj(i), &idx) == 0 && idx == i, "add %u gave %u", i, idx);
        if (i == VMPI_HTAB_FIRST + 5)
            early = &t.chunk[0][5];
    }
    atomic_store(&adding, 0);
    pthread_join(th, NULL);
    CHECK(looked_wrong == 0, "%d lookups beside the adds were wrong", looked_wrong);
    CHECK(early == &t.chunk[0][5] && *early == obj(VMPI_HTAB_FIRST + 5),
          "a chunk's slot moved while the table grew");
    for (uint32_t i = 1; i <= N; i++)
        if (vmpi_htab_get(&t, i) != obj(i)) {
            CHECK(0, "index %u holds the wrong object", i);
            break;
        }
    CHECK(vmpi_htab_get(&t, 0) == NULL && vmpi_htab_get(&t, N + 1) == NULL &&
              vmpi_htab_get(&t, UINT32_MAX) == NULL,
          "out of range");
    uint32_t gone[] = {3, VMPI_HTAB_FIRST - 1, VMPI_HTAB_FIRST, 3 * VMPI_HTAB_FIRST + 7, N};
    for (size_t k = 0; k < sizeof gone / sizeof *gone; k++) {
        vmpi_htab_del(&t, gone[k]);
        CHECK(vmpi_htab_get(&t, gone[k]) == NULL, "index %u still there after del", gone[k]);
    }
    vmpi_htab_del(&t, 0);
    vmpi_htab_del(&t, gone[0]); /* twice: ignored */
    uint32_t back[sizeof gone / sizeof *gone];
    for (size_t k = 0; k < sizeof gone / sizeof *gone; k++) {
        CHECK(vmpi_htab_add(&t, obj(7), &back[k]) == 0, "re-add");
        CHECK(vmpi_htab_get(&t, back[k]) == obj(7), "re-added %u", back[k]);
    }
    for (size_t k = 0; k < sizeof gone / sizeof *gone; k++) {
        int found = 0;
        for (size_t j = 0; j < sizeof back / sizeof *back; j++)
            found += back[j] == gone[k];
        CHECK(found == 1, "freed index %u came back %d times", gone[k], found);
    }
    uint32_t next = 0;
    CHECK(vmpi_htab_add(&t, obj(9), &next) == 0 && next == N + 1, "next new index %u", next);
    vmpi_htab_destroy(&t);
    CHECK(vmpi_htab_get(&t, 1) == NULL, "destroyed table still answers");
    if (failures)
        fprintf(stderr, "u_htab: %d failure(s)\n", failures);
    else
        printf("u_htab: OK\n");
    return failures != 0;
}
