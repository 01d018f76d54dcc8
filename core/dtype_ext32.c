/* The external32 data representation (MPI-3.1 13.5.2): big-endian, IEEE
 * formats, the standard's sizes (long and unsigned long 4 bytes, wchar_t
 * 2, long double the 16-byte IEEE quad), no padding (a value/index pair is
 * its value then its int).
 *
 * A type whose data is all of one predefined type (dt->basic) is packed
 * natively a chunk at a time (vmpi_dtype_pack, so its runs are copied as
 * usual) and each element converted; a type mixing predefined types is
 * walked through its envelope down to parts of one type each. */
#include "dtype_impl.h"

#include <string.h>

/* How one component of a predefined type converts: same size with the
 * bytes reversed, an integer narrowed/widened (signed or not), or an x87
 * long double to an IEEE quad. */
enum { CV_SWAP, CV_INT, CV_UINT, CV_LDQ };
struct part {
    unsigned char nat, ext, conv;
};

/* The components of predefined type h (native bytes sz): at most two. */
static int parts_of(MPI_Datatype h, MPI_Aint sz, struct part p[2])
{
    const struct part ld = { 16, 16, CV_LDQ }, i4 = { 4, 4, CV_SWAP };
    switch (h) {
    case MPI_LONG: p[0] = (struct part){ 8, 4, CV_INT }; return 1;
    case MPI_UNSIGNED_LONG: p[0] = (struct part){ 8, 4, CV_UINT }; return 1;
    case MPI_WCHAR: p[0] = (struct part){ 4, 2, CV_UINT }; return 1;
    case MPI_LONG_DOUBLE: p[0] = ld; return 1;
    case MPI_C_LONG_DOUBLE_COMPLEX: case MPI_CXX_LONG_DOUBLE_COMPLEX:
        p[0] = p[1] = ld; return 2;
    case MPI_LONG_DOUBLE_INT: p[0] = ld; p[1] = i4; return 2;
    case MPI_LONG_INT: p[0] = (struct part){ 8, 4, CV_INT }; p[1] = i4; return 2;
    case MPI_FLOAT_INT: p[0] = i4; p[1] = i4; return 2;
    case MPI_DOUBLE_INT: p[0] = (struct part){ 8, 8, CV_SWAP }; p[1] = i4; return 2;
    case MPI_SHORT_INT: p[0] = (struct part){ 2, 2, CV_SWAP }; p[1] = i4; return 2;
    /* Complex numbers and the pairs of two equal halves (2INT, 2REAL, ...). */
    case MPI_C_FLOAT_COMPLEX: case MPI_C_DOUBLE_COMPLEX: case MPI_COMPLEX:
    case MPI_DOUBLE_COMPLEX: case MPI_COMPLEX8: case MPI_COMPLEX16: case MPI_COMPLEX32:
    case MPI_CXX_FLOAT_COMPLEX: case MPI_CXX_DOUBLE_COMPLEX: case MPI_2INT:
    case MPI_2INTEGER: case MPI_2REAL: case MPI_2DOUBLE_PRECISION:
        p[0] = p[1] = (struct part){ (unsigned char)(sz / 2), (unsigned char)(sz / 2), CV_SWAP };
        return 2;
    default: p[0] = (struct part){ (unsigned char)sz, (unsigned char)sz, CV_SWAP }; return 1;
    }
}

static void swap(unsigned char *to, const unsigned char *from, int n)
{
    for (int j = 0; j < n; j++)
        to[j] = from[n - 1 - j];
}

/* One component, native (little-endian) to external32. */
static void to_ext(unsigned char *out, const unsigned char *in, struct part p)
{
    if (p.conv == CV_SWAP) {
        swap(out, in, p.nat);
    } else if (p.conv == CV_LDQ) {
        /* x87: 64-bit mantissa with an explicit integer bit, then sign and
         * 15-bit exponent, biased as the quad's. The quad drops the integer
         * bit and keeps the other 63 at the top of its 112-bit fraction. */
        uint64_t m;
        memcpy(&m, in, 8);
        m <<= 1;
        out[0] = in[9];
        out[1] = in[8];
        for (int j = 0; j < 8; j++)
            out[2 + j] = (unsigned char)(m >> (56 - 8 * j));
        memset(out + 10, 0, 6);
    } else {
        swap(out, in, p.ext); /* the low bytes of a narrower integer */
    }
}

/* One component, external32 to native. */
static void from_ext(unsigned char *out, const unsigned char *in, struct part p)
{
    if (p.conv == CV_SWAP) {
        swap(out, in, p.nat);
    } else if (p.conv == CV_LDQ) {
        uint64_t m = 0;
        for (int j = 0; j < 8; j++)
            m = m << 8 | in[2 + j];
        m >>= 1;
        if ((in[0] & 0x7f) | in[1]) /* a normal number has the integer bit */
            m |= (uint64_t)1 << 63;
        memcpy(out, &m, 8);
        out[8] = in[1];
        out[9] = in[0];
        memset(out + 10, 0, 6);
    } else {
        swap(out, in, p.ext);
        unsigned char fill = p.conv == CV_INT && (in[0] & 0x80) ? 0xff : 0;
        memset(out + p.ext, fill, (size_t)(p.nat - p.ext));
    }
}

enum mode { M_SIZE, M_PACK, M_UNPACK };
struct walk {
    enum mode mode;
    unsigned char *ext; /* the external32 stream, advanced as it goes */
    MPI_Aint size;      /* bytes of it so far */
};

/* count elements of dt at base, all of its data of one predefined type. */
static void uniform(struct walk *w, const void *base, MPI_Count count,
                    const struct vmpi_dtype *dt)
{
    const struct vmpi_dtype *bt = vmpi_dtype_get(dt->basic);
    struct part p[2];
    int np = parts_of(dt->basic, bt->size, p);
    size_t nat = p[0].nat + (np > 1 ? p[1].nat : 0), ext = p[0].ext + (np > 1 ? p[1].ext : 0);
    size_t total = (size_t)count * (size_t)dt->size;
    w->size += (MPI_Aint)(total / nat * ext);
    if (w->mode == M_SIZE)
        return;
    unsigned char tmp[4096];
    size_t chunk = sizeof tmp / nat * nat;
    for (size_t off = 0; off < total; off += chunk) {
        size_t n = total - off < chunk ? total - off : chunk;
        if (w->mode == M_PACK)
            vmpi_dtype_pack(tmp, base, count, dt, off, n);
        for (size_t e = 0; e < n; e += nat, w->ext += ext) {
            for (int k = 0, at = 0, xat = 0; k < np; at += p[k].nat, xat += p[k].ext, k++) {
                if (w->mode == M_PACK)
                    to_ext(w->ext + xat, tmp + e + at, p[k]);
                else
                    from_ext(tmp + e + at, w->ext + xat, p[k]);
            }
        }
        if (w->mode == M_UNPACK)
            vmpi_dtype_unpack((void *)(uintptr_t)base, count, dt, off, tmp, n);
    }
}

static void walk(struct walk *w, const char *base, MPI_Count count, const struct vmpi_dtype *dt);

/* The blocks of an envelope: block i is bl copies of types[t] at disp. */
static void blocks(struct walk *w, const char *el, const struct vmpi_dtype_env *e)
{
    const int *in = e->ints;
    int n = in[0];
    struct vmpi_dtype *old = e->types[0];
    MPI_Aint oext = vmpi_dtype_ext(old);
    for (int i = 0; i < n; i++) {
        switch (e->combiner) {
        case MPI_COMBINER_VECTOR:
            walk(w, vmpi_dtype_addr(el, i * in[2] * oext), in[1], old);
            break;
        case MPI_COMBINER_HVECTOR:
            walk(w, vmpi_dtype_addr(el, i * e->aints[0]), in[1], old);
            break;
        case MPI_COMBINER_INDEXED:
            walk(w, vmpi_dtype_addr(el, in[1 + n + i] * oext), in[1 + i], old);
            break;
        case MPI_COMBINER_HINDEXED:
            walk(w, vmpi_dtype_addr(el, e->aints[i]), in[1 + i], old);
            break;
        case MPI_COMBINER_INDEXED_BLOCK:
            walk(w, vmpi_dtype_addr(el, in[2 + i] * oext), in[1], old);
            break;
        case MPI_COMBINER_HINDEXED_BLOCK:
            walk(w, vmpi_dtype_addr(el, e->aints[i]), in[1], old);
            break;
        default: /* MPI_COMBINER_STRUCT */
            walk(w, vmpi_dtype_addr(el, e->aints[i]), in[1 + i], e->types[i]);
        }
    }
}

static void walk(struct walk *w, const char *base, MPI_Count count, const struct vmpi_dtype *dt)
{
    if (count <= 0 || dt->size == 0)
        return;
    if (dt->basic != MPI_DATATYPE_NULL) {
        uniform(w, base, count, dt);
        return;
    }
    const struct vmpi_dtype_env *e = dt->env;
    if (!e)
        vmpi_fatal("external32: datatype 0x%x mixes types but has no envelope",
                   (unsigned)dt->handle);
    for (MPI_Count c = 0; c < count; c++) {
        const char *el = vmpi_dtype_addr(base, c * vmpi_dtype_ext(dt));
        switch (e->combiner) {
        case MPI_COMBINER_DUP: case MPI_COMBINER_RESIZED:
            walk(w, el, 1, e->types[0]);
            break;
        case MPI_COMBINER_SUBARRAY: case MPI_COMBINER_DARRAY:
            walk(w, el, 1, e->inner);
            break;
        case MPI_COMBINER_CONTIGUOUS:
            walk(w, el, e->ints[0], e->types[0]);
            break;
        default:
            blocks(w, el, e);
        }
    }
}

MPI_Aint vmpi_dtype_ext32_size(const struct vmpi_dtype *dt)
{
    struct walk w = { .mode = M_SIZE };
    walk(&w, NULL, 1, dt);
    return w.size;
}

void vmpi_dtype_ext32_pack(void *out, const void *buf, MPI_Count count,
                           const struct vmpi_dtype *dt)
{
    struct walk w = { .mode = M_PACK, .ext = out };
    walk(&w, buf, count, dt);
}

void vmpi_dtype_ext32_unpack(void *buf, MPI_Count count, const struct vmpi_dtype *dt,
                             const void *in)
{
    struct walk w = { .mode = M_UNPACK, .ext = (unsigned char *)(uintptr_t)in };
    walk(&w, buf, count, dt);
}
