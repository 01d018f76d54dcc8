/* Unit test of base/sum.c, the integrity checksum: the CRC instruction and
 * the table give the same values, both equal a bit-at-a-time reference
 * written from the definition in sum.c (whose polynomial is checked against
 * CRC-32C's published check value), the copy is exact at every alignment,
 * also from a separate 24-byte head, and every single-bit change and every
 * swap of neighbouring words changes the sum; every bit of the seed counts;
 * SipHash gives its published values. Exits non-zero on any failure. */
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

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static uint32_t rot(uint32_t x, unsigned r)
{
    return x << r | x >> (32 - r);
}

/* The definition in base/sum.c, with nothing shared with it. */
static uint32_t reference(uint32_t seed, const unsigned char *p, size_t n)
{
    uint32_t t = (uint32_t)n;
    uint32_t lane[4] = {t, t ^ 0x9e3779b9u, t ^ 0x7f4a7c15u, t ^ 0x85ebca6bu};
    size_t k = 0;
    for (; 8 * k + 8 <= n; k++)
        lane[k % 4] = bit_crc(lane[k % 4], p + 8 * k, 8);
    lane[0] = bit_crc(lane[0], p + 8 * k, n - 8 * k);
    return seed ^ lane[0] ^ rot(lane[1], 8) ^ rot(lane[2], 16) ^ rot(lane[3], 24);
}

int main(void)
{
    const unsigned char *check = (const unsigned char *)"123456789";
    CHECK((bit_crc(~0u, check, 9) ^ ~0u) == 0xe3069283u, "CRC-32C check value");
    /* SipHash-2-4's published vectors: key 00 01 .. 0f, messages 00 01 ..
     * of 0 and 15 bytes. */
    unsigned char msg[15];
    for (int i = 0; i < 15; i++)
        msg[i] = (unsigned char)i;
    uint64_t k0 = 0x0706050403020100ull, k1 = 0x0f0e0d0c0b0a0908ull;
    CHECK(vmpi_siphash(k0, k1, msg, 0) == 0x726fdb47dd0e0e31ull, "SipHash of 0 bytes");
    CHECK(vmpi_siphash(k0, k1, msg, 15) == 0xa129ca6149be45e5ull, "SipHash of 15 bytes");

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
    /* Every bit of the seed counts, whatever the length: 4096 seeds give
     * 4096 sums of the same bytes (lengths that are multiples of 32, where
     * the four lanes take equal numbers of words, included). */
    static const size_t seed_lens[] = {0, 8, 24, 32, 40, 64, 96, 256, 4096};
    enum { SEEDS = 4096 };
    uint32_t *sums = malloc(SEEDS * sizeof *sums);
    for (size_t l = 0; sums && l < sizeof seed_lens / sizeof *seed_lens; l++) {
        for (uint32_t k = 0; k < SEEDS; k++)
            sums[k] = vmpi_sum_copy(k * 0x9e3779b1u ^ (k << 7), NULL, src, seed_lens[l]);
        qsort(sums, SEEDS, sizeof *sums, cmp_u32);
        int same = 0;
        for (int k = 1; k < SEEDS; k++)
            same += sums[k] == sums[k - 1];
        CHECK(same == 0, "%d of %d seeds gave a sum already seen, %zu bytes", same, SEEDS,
              seed_lens[l]);
        memset(dst, 0, 64);
        CHECK(vmpi_sum_copy_head(5, NULL, dst, src, 8) != vmpi_sum_copy_head(6, NULL, dst, src, 8),
              "the seed changes the sum of a head and 8 bytes");
    }
    free(sums);
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
