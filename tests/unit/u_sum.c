/* Unit test of base/sum.c, the integrity checksum: the CRC instruction and
 * the table give the same values, both equal a bit-at-a-time reference
 * written from the definition in sum.c (whose polynomial is checked against
 * CRC-32C's published check value), the copy is exact at every alignment,
 * also from a separate 24-byte head, and every single-bit change and every
 * swap of neighbouring words changes the sum. Exits non-zero on any failure. */
#include "../../base/base.h"

#include <stdlib.h>
#include <string.h>

#include "u_check.h"

static uint32_t bit_crc(uint32_t c, const unsigned char *p, size_t n)
{
    while (n--) {
        c ^= *p++;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
    }
    return c;
}

static uint32_t rot(uint32_t x, unsigned r)
{
    return x << r | x >> (32 - r);
}

/* The definition in base/sum.c, with nothing shared with it. */
static uint32_t reference(uint32_t seed, const unsigned char *p, size_t n)
{
    seed ^= (uint32_t)n;
    uint32_t lane[4] = {seed, seed ^ 0x9e3779b9u, seed ^ 0x7f4a7c15u, seed ^ 0x85ebca6bu};
    size_t k = 0;
    for (; 8 * k + 8 <= n; k++)
        lane[k % 4] = bit_crc(lane[k % 4], p + 8 * k, 8);
    lane[0] = bit_crc(lane[0], p + 8 * k, n - 8 * k);
    return lane[0] ^ rot(lane[1], 8) ^ rot(lane[2], 16) ^ rot(lane[3], 24);
}

int main(void)
{
    const unsigned char *check = (const unsigned char *)"123456789";
    CHECK((bit_crc(~0u, check, 9) ^ ~0u) == 0xe3069283u, "CRC-32C check value");

    enum { MAX = 4096 + 64 };
    unsigned char *src = malloc(MAX), *dst = malloc(MAX);
    if (!src || !dst)
        return 1;
    srand(7);
    for (size_t i = 0; i < MAX; i++)
        src[i] = (unsigned char)rand();
    static const size_t lens[] = {0, 1, 7, 8, 9, 15, 16, 23, 24, 25, 31, 32, 33, 40, 47,
                                   48, 56, 63, 64, 100, 1000, 4096};
    for (int sw = 0; sw < 2; sw++) {
        vmpi_sum_init(sw);
        for (size_t l = 0; l < sizeof lens / sizeof *lens; l++)
            for (size_t off = 0; off < 8; off++) {
                size_t n = lens[l];
                uint32_t seed = (uint32_t)(n * 2654435761u + off);
                memset(dst, 0xee, MAX);
                uint32_t got = vmpi_sum_copy(seed, dst + off, src + off, n);
                CHECK(got == reference(seed, src + off, n), "%s, %zu bytes at +%zu",
                      sw ? "table" : "instruction", n, off);
                CHECK(!memcmp(dst + off, src + off, n), "copy of %zu bytes at +%zu", n, off);
                CHECK((off == 0 || dst[off - 1] == 0xee) && dst[off + n] == 0xee,
                      "copy of %zu bytes at +%zu wrote outside", n, off);
                CHECK(vmpi_sum_copy(seed, NULL, src + off, n) == got, "sum only, %zu bytes", n);
                memset(dst, 0xee, MAX);
                CHECK(vmpi_sum_copy_head(seed, dst + off, src + off, src + off + 24, n) ==
                          reference(seed, src + off, n + 24),
                      "24-byte head and %zu bytes", n);
                CHECK(!memcmp(dst + off, src + off, n + 24) && dst[off + n + 24] == 0xee,
                      "copy of a head and %zu bytes", n);
            }
    }
    vmpi_sum_init(false);
    size_t n = 4096;
    uint32_t base = vmpi_sum_copy(1, NULL, src, n);
    CHECK(vmpi_sum_copy(2, NULL, src, n) != base, "the seed changes the sum");
    memset(dst, 0, 64);
    CHECK(vmpi_sum_copy(1, NULL, dst, 40) != vmpi_sum_copy(1, NULL, dst, 41),
          "trailing zero bytes change the sum");
    int missed = 0;
    for (size_t bit = 0; bit < 8 * n; bit++) {
        src[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        missed += vmpi_sum_copy(1, NULL, src, n) == base;
        src[bit / 8] ^= (unsigned char)(1u << (bit % 8));
    }
    CHECK(missed == 0, "%d of %zu single-bit changes kept the sum", missed, 8 * n);
    for (size_t w = 0; w + 1 < n / 8; w++) {
        uint64_t a, b;
        memcpy(&a, src + 8 * w, 8);
        memcpy(&b, src + 8 * w + 8, 8);
        if (a == b)
            continue;
        memcpy(src + 8 * w, &b, 8);
        memcpy(src + 8 * w + 8, &a, 8);
        CHECK(vmpi_sum_copy(1, NULL, src, n) != base, "words %zu and %zu swapped", w, w + 1);
        memcpy(src + 8 * w, &a, 8);
        memcpy(src + 8 * w + 8, &b, 8);
    }
    free(src);
    free(dst);
    if (failures)
        fprintf(stderr, "u_sum: %d failures\n", failures);
    else
        printf("u_sum: ok\n");
    return failures != 0;
}
