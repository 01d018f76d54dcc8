/* The integrity checksum of data that crosses memory another party can
 * write (VMPI_INTEGRITY=crc32c): CRC-32C (Castagnoli) over four lanes of
 * interleaved 8-byte words, so the CPU's CRC instruction, which takes three
 * cycles but starts one a cycle, runs independent chains, and a small
 * message's record (a 24-byte header and 8 bytes) costs one CRC step per
 * lane, in parallel, and a rotate-and-xor; the copy and the checksum are
 * one pass over the data, each word loaded once.
 *
 * Definition (the same on every CPU: the instruction and the table give
 * identical lanes): words w0, w1, w2, ... are the little-endian 8-byte
 * words of the data, n its bytes; lane j (j = 0..3) starts at n ^ LANE[j]
 * and takes the words wk with k mod 4 = j; the bytes after the last whole
 * word go to lane 0. The result is
 * seed ^ lane0 ^ rotl(lane1, 8) ^ rotl(lane2, 16) ^ rotl(lane3, 24): each
 * position of a word goes through its own linear map, so moved words
 * change it, and each of the seed's 2^32 values gives another result for
 * the same data. (Were the seed in every lane's start, its share would be
 * y ^ rotl(y, 8) ^ rotl(y, 16) ^ rotl(y, 24) whenever the lanes take equal
 * numbers of words, a value of 8 bits: 256 results for 2^32 seeds.) */
#include "base.h"

#include <string.h>

#define POLY 0x82f63b78u /* CRC-32C, bit-reflected */

static const uint32_t LANE[4] = {0, 0x9e3779b9u, 0x7f4a7c15u, 0x85ebca6bu};

static uint32_t table[256];

static void table_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
        table[i] = c;
    }
}

static inline uint32_t sw8(uint32_t c, uint8_t b)
{
    return (c >> 8) ^ table[(c ^ b) & 0xff];
}

static inline uint32_t sw64(uint32_t c, uint64_t w)
{
    for (int i = 0; i < 8; i++, w >>= 8)
        c = sw8(c, (uint8_t)w);
    return c;
}

static inline uint64_t load(const unsigned char *s)
{
    uint64_t w;
    memcpy(&w, s, sizeof w);
    return w;
}

static inline void store(unsigned char *d, uint64_t w)
{
    memcpy(d, &w, sizeof w);
}

static inline uint32_t rotl(uint32_t x, unsigned r)
{
    return x << r | x >> (32 - r);
}

/* One body for both implementations: W is the word step, B the byte step.
 * A head of 24 bytes, when given, is the data's first three words. */
#define SUM_BODY(W, B)                                                                 \
    unsigned char *d = dst;                                                            \
    const unsigned char *s = src;                                                      \
    uint32_t tot = (uint32_t)(n + (head ? 24 : 0));                                    \
    uint32_t l0 = tot ^ LANE[0], l1 = tot ^ LANE[1], l2 = tot ^ LANE[2],               \
             l3 = tot ^ LANE[3];                                                       \
    size_t i = 0;                                                                      \
    if (head) {                                                                        \
        const unsigned char *h = head;                                                 \
        uint64_t x = load(h), y = load(h + 8), z = load(h + 16);                       \
        if (d) {                                                                       \
            store(d, x);                                                               \
            store(d + 8, y);                                                           \
            store(d + 16, z);                                                          \
            d += 24;                                                                   \
        }                                                                              \
        l0 = W(l0, x);                                                                 \
        l1 = W(l1, y);                                                                 \
        l2 = W(l2, z);                                                                 \
        if (n >= 8) {                                                                  \
            uint64_t w = load(s);                                                      \
            if (d)                                                                     \
                store(d, w);                                                           \
            l3 = W(l3, w);                                                             \
            i = 8;                                                                     \
        }                                                                              \
    }                                                                                  \
    for (; n - i >= 32; i += 32) {                                                     \
        uint64_t w = load(s + i), x = load(s + i + 8), y = load(s + i + 16),           \
                 z = load(s + i + 24);                                                 \
        if (d) {                                                                       \
            store(d + i, w);                                                           \
            store(d + i + 8, x);                                                       \
            store(d + i + 16, y);                                                      \
            store(d + i + 24, z);                                                      \
        }                                                                              \
        l0 = W(l0, w);                                                                 \
        l1 = W(l1, x);                                                                 \
        l2 = W(l2, y);                                                                 \
        l3 = W(l3, z);                                                                 \
    }                                                                                  \
    if (n - i >= 8) {                                                                  \
        uint64_t w = load(s + i);                                                      \
        if (d)                                                                         \
            store(d + i, w);                                                           \
        l0 = W(l0, w);                                                                 \
        i += 8;                                                                        \
        if (n - i >= 8) {                                                              \
            w = load(s + i);                                                           \
            if (d)                                                                     \
                store(d + i, w);                                                       \
            l1 = W(l1, w);                                                             \
            i += 8;                                                                    \
        }                                                                              \
        if (n - i >= 8) {                                                              \
            w = load(s + i);                                                           \
            if (d)                                                                     \
                store(d + i, w);                                                       \
            l2 = W(l2, w);                                                             \
            i += 8;                                                                    \
        }                                                                              \
    }                                                                                  \
    for (; i < n; i++) {                                                               \
        if (d)                                                                         \
            d[i] = s[i];                                                               \
        l0 = B(l0, s[i]);                                                              \
    }                                                                                  \
    return seed ^ l0 ^ rotl(l1, 8) ^ rotl(l2, 16) ^ rotl(l3, 24)

static uint32_t sum_sw(uint32_t seed, void *dst, const void *head, const void *src, size_t n)
{
    SUM_BODY(sw64, sw8);
}

#if defined(__x86_64__)
#include <nmmintrin.h>

#define HW64(c, w) ((uint32_t)_mm_crc32_u64((c), (w)))
#define HW8(c, b) _mm_crc32_u8((c), (b))

__attribute__((target("sse4.2"))) static uint32_t sum_hw(uint32_t seed, void *dst,
                                                         const void *head, const void *src,
                                                         size_t n)
{
    SUM_BODY(HW64, HW8);
}

/* The bytes after the last whole word, in order: four at once with the
 * instruction's 4-byte form (the same as four byte steps), then bytes. */
__attribute__((target("sse4.2"))) static inline uint32_t tail_hw(uint32_t c, unsigned char *d,
                                                                const unsigned char *s, size_t t)
{
    size_t i = 0;
    if (t & 4) {
        uint32_t v;
        memcpy(&v, s, sizeof v);
        if (d)
            memcpy(d, &v, sizeof v);
        c = _mm_crc32_u32(c, v);
        i = 4;
    }
    for (; i < t; i++) {
        if (d)
            d[i] = s[i];
        c = _mm_crc32_u8(c, s[i]);
    }
    return c;
}

/* The same sum for data of at most four words (a small message's record:
 * with a head, at most 8 payload bytes), without the loops' bookkeeping:
 * most records are that small, and this takes about 1 ns less a call. */
__attribute__((target("sse4.2"))) static uint32_t small_hw(uint32_t seed, void *dst,
                                                           const void *head, const void *src,
                                                           size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    uint32_t tot = (uint32_t)(n + (head ? 24 : 0));
    uint32_t l0 = tot ^ LANE[0], l1 = tot ^ LANE[1], l2 = tot ^ LANE[2], l3 = tot ^ LANE[3];
    if (head) {
        const unsigned char *h = head;
        uint64_t x = load(h), y = load(h + 8), z = load(h + 16);
        if (d) {
            store(d, x);
            store(d + 8, y);
            store(d + 16, z);
            d += 24;
        }
        l0 = HW64(l0, x);
        l1 = HW64(l1, y);
        l2 = HW64(l2, z);
        if (n == 8) {
            uint64_t v = load(s);
            if (d)
                store(d, v);
            return seed ^ l0 ^ rotl(l1, 8) ^ rotl(l2, 16) ^ rotl(HW64(l3, v), 24);
        }
    } else {
        /* 16-byte loads and stores: the caller reads the copy's first 16
         * bytes (a header) at once, and a load that spans two stores
         * waits for them to reach the cache instead of being forwarded. */
        size_t i = 0;
        if (n >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)s);
            if (d)
                _mm_storeu_si128((__m128i *)d, v);
            l0 = HW64(l0, (uint64_t)_mm_cvtsi128_si64(v));
            l1 = HW64(l1, (uint64_t)_mm_extract_epi64(v, 1));
            i = 16;
            if (n >= 32) {
                v = _mm_loadu_si128((const __m128i *)(s + 16));
                if (d)
                    _mm_storeu_si128((__m128i *)(d + 16), v);
                l2 = HW64(l2, (uint64_t)_mm_cvtsi128_si64(v));
                l3 = HW64(l3, (uint64_t)_mm_extract_epi64(v, 1));
                i = 32;
            } else if (n >= 24) {
                uint64_t w = load(s + 16);
                if (d)
                    store(d + 16, w);
                l2 = HW64(l2, w);
                i = 24;
            }
        } else if (n >= 8) {
            uint64_t w = load(s);
            if (d)
                store(d, w);
            l0 = HW64(l0, w);
            i = 8;
        }
        s += i;
        d = d ? d + i : d;
        n -= i;
    }
    l0 = tail_hw(l0, d, s, n);
    return seed ^ l0 ^ rotl(l1, 8) ^ rotl(l2, 16) ^ rotl(l3, 24);
}
#endif

/* A direct call of either (not a pointer): the small messages' path is a
 * few nanoseconds, a predictable branch is cheaper than an indirect call. */
static bool use_hw;

void vmpi_sum_init(bool software)
{
    table_init();
#if defined(__x86_64__)
    use_hw = !software && __builtin_cpu_supports("sse4.2");
#else
    (void)software;
#endif
}

static inline uint32_t sum(uint32_t seed, void *dst, const void *head, const void *src, size_t n)
{
#if defined(__x86_64__)
    if (VMPI_LIKELY(use_hw))
        return n <= (head ? 8 : 32) ? small_hw(seed, dst, head, src, n)
                                    : sum_hw(seed, dst, head, src, n);
#endif
    return sum_sw(seed, dst, head, src, n);
}

uint32_t vmpi_sum_copy(uint32_t seed, void *dst, const void *src, size_t n)
{
    return sum(seed, dst, NULL, src, n);
}

uint32_t vmpi_sum_copy_head(uint32_t seed, void *dst, const void *head, const void *src, size_t n)
{
    return sum(seed, dst, head, src, n);
}

/* SipHash-2-4 (Aumasson and Bernstein): the keyed function that turns the
 * job's secret into the per-pair keys of the checksums' seeds, so that
 * what one pair's records reveal says nothing of another pair's keys or of
 * the secret. */
static inline uint64_t rotl64(uint64_t x, unsigned r)
{
    return x << r | x >> (64 - r);
}

#define SIP_ROUND(v0, v1, v2, v3)                                                      \
    do {                                                                               \
        v0 += v1, v1 = rotl64(v1, 13), v1 ^= v0, v0 = rotl64(v0, 32);                  \
        v2 += v3, v3 = rotl64(v3, 16), v3 ^= v2;                                       \
        v0 += v3, v3 = rotl64(v3, 21), v3 ^= v0;                                       \
        v2 += v1, v1 = rotl64(v1, 17), v1 ^= v2, v2 = rotl64(v2, 32);                  \
    } while (0)

uint64_t vmpi_siphash(uint64_t k0, uint64_t k1, const void *msg, size_t n)
{
    const unsigned char *p = msg;
    uint64_t v0 = k0 ^ 0x736f6d6570736575ull, v1 = k1 ^ 0x646f72616e646f6dull,
             v2 = k0 ^ 0x6c7967656e657261ull, v3 = k1 ^ 0x7465646279746573ull;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t m = 0;
        for (int b = 7; b >= 0; b--)
            m = m << 8 | p[i + (size_t)b];
        v3 ^= m;
        SIP_ROUND(v0, v1, v2, v3);
        SIP_ROUND(v0, v1, v2, v3);
        v0 ^= m;
    }
    uint64_t last = (uint64_t)n << 56;
    for (size_t b = 0; i + b < n; b++)
        last |= (uint64_t)p[i + b] << (8 * b);
    v3 ^= last;
    SIP_ROUND(v0, v1, v2, v3);
    SIP_ROUND(v0, v1, v2, v3);
    v0 ^= last;
    v2 ^= 0xff;
    for (int r = 0; r < 4; r++)
        SIP_ROUND(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}
