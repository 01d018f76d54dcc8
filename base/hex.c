/* Hex text for binary values that travel as strings (PMI values). */
#include "base.h"

#include <string.h>

void vmpi_hex_encode(char *out, const unsigned char *in, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = '\0';
}

size_t vmpi_hex_decode(unsigned char *out, size_t cap, const char *in)
{
    size_t n = strlen(in);
    if (n % 2 || n / 2 > cap)
        return 0;
    for (size_t i = 0; i < n / 2; i++) {
        unsigned v = 0;
        for (int k = 0; k < 2; k++) {
            char c = in[2 * i + (size_t)k];
            unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                         : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                                                : 16;
            if (d > 15)
                return 0;
            v = v * 16 + d;
        }
        out[i] = (unsigned char)v;
    }
    return n / 2;
}
