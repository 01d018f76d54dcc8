/* np: 1 */
/* MPI_Type_get_envelope and MPI_Type_get_contents for every combiner: each
 * type is rebuilt from its contents with the constructor its combiner names
 * and must have the same size, bounds and packed image; inner derived types
 * come back as new handles (freed here), predefined ones as themselves; the
 * contents survive the user freeing the inner type. The Fortran kinds
 * (MPI_Type_create_f90_*, MPI_Type_match_size), the names of the Fortran
 * and C++ named types, MPI-1's removed constructors and bound queries, and
 * bad input. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "t_check.h"

static unsigned char src[4096];

/* Builds the type the contents of t describe (inner types as returned). */
static MPI_Datatype rebuild(MPI_Datatype t)
{
    int ni, na, nd, comb;
    OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    CHECK(comb != MPI_COMBINER_NAMED, "rebuild of a named type");
    int in[64];
    MPI_Aint a[32];
    MPI_Datatype d[8], n;
    CHECK(ni <= 64 && na <= 32 && nd <= 8, "envelope too large: %d %d %d", ni, na, nd);
    OK(MPI_Type_get_contents(t, ni, na, nd, in, a, d));
    switch (comb) {
    case MPI_COMBINER_DUP: OK(MPI_Type_dup(d[0], &n)); break;
    case MPI_COMBINER_CONTIGUOUS: OK(MPI_Type_contiguous(in[0], d[0], &n)); break;
    case MPI_COMBINER_VECTOR: OK(MPI_Type_vector(in[0], in[1], in[2], d[0], &n)); break;
    case MPI_COMBINER_HVECTOR: OK(MPI_Type_create_hvector(in[0], in[1], a[0], d[0], &n)); break;
    case MPI_COMBINER_INDEXED:
        OK(MPI_Type_indexed(in[0], in + 1, in + 1 + in[0], d[0], &n));
        break;
    case MPI_COMBINER_HINDEXED: OK(MPI_Type_create_hindexed(in[0], in + 1, a, d[0], &n)); break;
    case MPI_COMBINER_INDEXED_BLOCK:
        OK(MPI_Type_create_indexed_block(in[0], in[1], in + 2, d[0], &n));
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        OK(MPI_Type_create_hindexed_block(in[0], in[1], a, d[0], &n));
        break;
    case MPI_COMBINER_STRUCT: OK(MPI_Type_create_struct(in[0], in + 1, a, d, &n)); break;
    case MPI_COMBINER_RESIZED: OK(MPI_Type_create_resized(d[0], a[0], a[1], &n)); break;
    case MPI_COMBINER_SUBARRAY: {
        int k = in[0];
        OK(MPI_Type_create_subarray(k, in + 1, in + 1 + k, in + 1 + 2 * k, in[1 + 3 * k], d[0],
                                    &n));
        break;
    }
    case MPI_COMBINER_DARRAY: {
        int k = in[2];
        OK(MPI_Type_create_darray(in[0], in[1], k, in + 3, in + 3 + k, in + 3 + 2 * k,
                                  in + 3 + 3 * k, in[3 + 4 * k], d[0], &n));
        break;
    }
    default: CHECK(0, "unexpected combiner %d", comb);
    }
    for (int i = 0; i < nd; i++) {
        int ci, ca, cd, cc;
        OK(MPI_Type_get_envelope(d[i], &ci, &ca, &cd, &cc));
        if (cc != MPI_COMBINER_NAMED)
            OK(MPI_Type_free(&d[i]));
    }
    return n;
}

/* t and its rebuilt twin have the same layout; frees t. */
static void round_trip(MPI_Datatype t, int combiner, const char *what)
{
    int ni, na, nd, comb;
    OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    CHECK(comb == combiner, "%s: combiner %d, want %d", what, comb, combiner);
    MPI_Datatype r = rebuild(t);
    MPI_Aint lb[2], ext[2], tlb[2], text[2];
    int size[2], pos[2] = { 0, 0 };
    unsigned char out[2][4096];
    MPI_Datatype ts[2] = { t, r };
    for (int k = 0; k < 2; k++) {
        OK(MPI_Type_commit(&ts[k]));
        OK(MPI_Type_size(ts[k], &size[k]));
        OK(MPI_Type_get_extent(ts[k], &lb[k], &ext[k]));
        OK(MPI_Type_get_true_extent(ts[k], &tlb[k], &text[k]));
        CHECK(size[k] <= 2048 && tlb[k] >= 0 && tlb[k] + text[k] <= 2048, "%s: too large", what);
        OK(MPI_Pack(src, 1, ts[k], out[k], sizeof out[k], &pos[k], MPI_COMM_WORLD));
    }
    CHECK(size[0] == size[1] && lb[0] == lb[1] && ext[0] == ext[1] && tlb[0] == tlb[1] &&
              text[0] == text[1],
          "%s: rebuilt type differs: size %d/%d lb %ld/%ld extent %ld/%ld", what, size[0],
          size[1], (long)lb[0], (long)lb[1], (long)ext[0], (long)ext[1]);
    CHECK(pos[0] == pos[1] && memcmp(out[0], out[1], (size_t)pos[0]) == 0,
          "%s: packed images differ", what);
    OK(MPI_Type_free(&ts[0]));
    OK(MPI_Type_free(&ts[1]));
}

static void test_round_trips(void)
{
    MPI_Datatype t, v, s;
    int bl[3] = { 2, 1, 3 }, dsp[3] = { 5, 0, 9 };
    MPI_Aint ad[3] = { 40, 0, 16 };
    OK(MPI_Type_vector(3, 2, 4, MPI_INT, &t));
    round_trip(t, MPI_COMBINER_VECTOR, "vector");
    OK(MPI_Type_vector(3, 2, 4, MPI_INT, &v));
    OK(MPI_Type_create_hvector(2, 3, 20, MPI_SHORT, &t));
    round_trip(t, MPI_COMBINER_HVECTOR, "hvector");
    OK(MPI_Type_contiguous(3, MPI_DOUBLE, &t));
    round_trip(t, MPI_COMBINER_CONTIGUOUS, "contiguous");
    OK(MPI_Type_indexed(3, bl, dsp, MPI_FLOAT, &t));
    round_trip(t, MPI_COMBINER_INDEXED, "indexed");
    OK(MPI_Type_create_hindexed(3, bl, ad, MPI_CHAR, &t));
    round_trip(t, MPI_COMBINER_HINDEXED, "hindexed");
    OK(MPI_Type_create_indexed_block(3, 2, dsp, MPI_INT, &t));
    round_trip(t, MPI_COMBINER_INDEXED_BLOCK, "indexed_block");
    OK(MPI_Type_create_hindexed_block(3, 2, ad, MPI_INT, &t));
    round_trip(t, MPI_COMBINER_HINDEXED_BLOCK, "hindexed_block");
    /* A struct of a derived type: the vector comes back as a new handle. */
    MPI_Datatype ty[3] = { MPI_CHAR, v, MPI_DOUBLE };
    OK(MPI_Type_create_struct(3, bl, ad, ty, &s));
    OK(MPI_Type_dup(s, &t));
    round_trip(t, MPI_COMBINER_DUP, "dup of struct");
    OK(MPI_Type_create_resized(s, -8, 200, &t));
    round_trip(t, MPI_COMBINER_RESIZED, "resized");
    /* The user frees the inner types: the contents still hold them. */
    OK(MPI_Type_contiguous(2, s, &t));
    OK(MPI_Type_free(&s));
    OK(MPI_Type_free(&v));
    round_trip(t, MPI_COMBINER_CONTIGUOUS, "contiguous of freed struct");
    /* MPI-1's removed forms record the combiners of their MPI-2 twins. */
    OK(MPI_Type_hvector(2, 2, 24, MPI_INT, &t));
    round_trip(t, MPI_COMBINER_HVECTOR, "MPI-1 hvector");
    OK(MPI_Type_hindexed(3, bl, ad, MPI_SHORT, &t));
    round_trip(t, MPI_COMBINER_HINDEXED, "MPI-1 hindexed");
    MPI_Datatype ty1[3] = { MPI_INT, MPI_UB, MPI_CHAR };
    MPI_Aint ad1[3] = { 4, 64, 0 };
    OK(MPI_Type_struct(3, bl, ad1, ty1, &t));
    MPI_Aint e1, l1, u1, a1, a2;
    OK(MPI_Type_extent(t, &e1));
    OK(MPI_Type_lb(t, &l1));
    OK(MPI_Type_ub(t, &u1));
    CHECK(e1 == 64 && l1 == 0 && u1 == 64, "MPI-1 struct bounds %ld %ld %ld", (long)e1,
          (long)l1, (long)u1);
    round_trip(t, MPI_COMBINER_STRUCT, "MPI-1 struct");
    OK(MPI_Address(&ad1[1], &a1));
    OK(MPI_Get_address(&ad1[1], &a2));
    CHECK(a1 == a2, "MPI_Address and MPI_Get_address differ");
    t_expect_err(MPI_Type_extent(MPI_DATATYPE_NULL, &e1), MPI_ERR_TYPE, "MPI_Type_extent",
                 "extent of MPI_DATATYPE_NULL");
    t_expect_err(MPI_Type_struct(-1, bl, ad1, ty1, &t), MPI_ERR_COUNT, "MPI_Type_struct",
                 "negative count");
    int sz[3] = { 4, 5, 6 }, sub[3] = { 2, 3, 2 }, st[3] = { 1, 2, 3 };
    OK(MPI_Type_create_subarray(3, sz, sub, st, MPI_ORDER_C, MPI_INT, &t));
    round_trip(t, MPI_COMBINER_SUBARRAY, "subarray");
    int g[2] = { 7, 6 }, dist[2] = { MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK },
        darg[2] = { 2, MPI_DISTRIBUTE_DFLT_DARG }, ps[2] = { 2, 3 };
    OK(MPI_Type_create_darray(6, 4, 2, g, dist, darg, ps, MPI_ORDER_FORTRAN, MPI_SHORT, &t));
    round_trip(t, MPI_COMBINER_DARRAY, "darray");
}

/* The same handle for the same (p, r), its combiner and contents, usable
 * in a reduction; never freed. */
static void test_f90(void)
{
    MPI_Datatype t, u;
    int ni, na, nd, comb, size, in[2];
    OK(MPI_Type_create_f90_real(7, MPI_UNDEFINED, &t));
    OK(MPI_Type_create_f90_real(7, MPI_UNDEFINED, &u));
    CHECK(t == u, "f90_real: two handles for (7, UNDEFINED)");
    OK(MPI_Type_size(t, &size));
    CHECK(size == 8, "f90_real(7): size %d, want 8", size);
    OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_F90_REAL && ni == 2 && na == 0 && nd == 0, "f90_real envelope");
    OK(MPI_Type_get_contents(t, 2, 0, 0, in, NULL, NULL));
    CHECK(in[0] == 7 && in[1] == MPI_UNDEFINED, "f90_real contents %d %d", in[0], in[1]);
    double a = 1.5, b = 2.0;
    OK(MPI_Reduce_local(&a, &b, 1, t, MPI_SUM));
    CHECK(b == 3.5, "SUM on f90 real: %g", b);
    OK(MPI_Type_create_f90_complex(3, 30, &t));
    OK(MPI_Type_size(t, &size));
    CHECK(size == 8, "f90_complex(3, 30): size %d", size);
    OK(MPI_Type_create_f90_integer(5, &t));
    OK(MPI_Type_size(t, &size));
    OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    CHECK(size == 4 && comb == MPI_COMBINER_F90_INTEGER && ni == 1, "f90_integer(5)");
    OK(MPI_Type_create_f90_real(30, 300, &t));
    OK(MPI_Type_size(t, &size));
    CHECK(size == 16, "f90_real(30): the quad, size %d", size);
    t_expect_err(MPI_Type_free(&t), MPI_ERR_TYPE, "MPI_Type_free", "free of an f90 type");
    t_expect_err(MPI_Type_create_f90_real(40, 10, &t), MPI_ERR_ARG, "MPI_Type_create_f90_real",
                 "f90_real(40)");
    t_expect_err(MPI_Type_create_f90_complex(3, 5000, &t), MPI_ERR_ARG,
                 "MPI_Type_create_f90_complex", "f90_complex(r 5000)");
    t_expect_err(MPI_Type_create_f90_integer(19, &t), MPI_ERR_ARG, "MPI_Type_create_f90_integer",
                 "f90_integer(19)");
    t_expect_err(MPI_Type_create_f90_integer(4, NULL), MPI_ERR_ARG,
                 "MPI_Type_create_f90_integer", "NULL newtype");
    static const struct { int cls, size; MPI_Datatype want; } m[] = {
        { MPI_TYPECLASS_REAL, 4, MPI_REAL4 },        { MPI_TYPECLASS_REAL, 8, MPI_REAL8 },
        { MPI_TYPECLASS_REAL, 16, MPI_REAL16 },      { MPI_TYPECLASS_INTEGER, 1, MPI_INTEGER1 },
        { MPI_TYPECLASS_INTEGER, 8, MPI_INTEGER8 },  { MPI_TYPECLASS_COMPLEX, 8, MPI_COMPLEX8 },
        { MPI_TYPECLASS_COMPLEX, 32, MPI_COMPLEX32 },
    };
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        OK(MPI_Type_match_size(m[i].cls, m[i].size, &t));
        CHECK(t == m[i].want, "match_size(%d, %d) gave 0x%x", m[i].cls, m[i].size, (unsigned)t);
    }
    t_expect_err(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &t), MPI_ERR_ARG,
                 "MPI_Type_match_size", "no 3-byte integer");
    t_expect_err(MPI_Type_match_size(7, 4, &t), MPI_ERR_ARG, "MPI_Type_match_size",
                 "bad typeclass");
}

static void test_names(void)
{
    static const struct { MPI_Datatype t; const char *name; int size; } n[] = {
        { MPI_CHARACTER, "MPI_CHARACTER", 1 },   { MPI_INTEGER, "MPI_INTEGER", 4 },
        { MPI_REAL, "MPI_REAL", 4 },             { MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", 8 },
        { MPI_COMPLEX, "MPI_COMPLEX", 8 },       { MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", 16 },
        { MPI_LOGICAL, "MPI_LOGICAL", 4 },       { MPI_2INTEGER, "MPI_2INTEGER", 8 },
        { MPI_2REAL, "MPI_2REAL", 8 },           { MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", 16 },
        { MPI_INTEGER1, "MPI_INTEGER1", 1 },     { MPI_INTEGER2, "MPI_INTEGER2", 2 },
        { MPI_INTEGER4, "MPI_INTEGER4", 4 },     { MPI_INTEGER8, "MPI_INTEGER8", 8 },
        { MPI_REAL4, "MPI_REAL4", 4 },           { MPI_REAL8, "MPI_REAL8", 8 },
        { MPI_REAL16, "MPI_REAL16", 16 },        { MPI_COMPLEX8, "MPI_COMPLEX8", 8 },
        { MPI_COMPLEX16, "MPI_COMPLEX16", 16 },  { MPI_COMPLEX32, "MPI_COMPLEX32", 32 },
        { MPI_CXX_BOOL, "MPI_CXX_BOOL", 1 },
        { MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", 8 },
        { MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", 16 },
        { MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", 32 },
    };
    for (size_t i = 0; i < sizeof n / sizeof n[0]; i++) {
        char name[MPI_MAX_OBJECT_NAME];
        int len, size, ni, na, nd, comb;
        OK(MPI_Type_get_name(n[i].t, name, &len));
        CHECK(strcmp(name, n[i].name) == 0, "name %s, want %s", name, n[i].name);
        OK(MPI_Type_size(n[i].t, &size));
        CHECK(size == n[i].size, "%s: size %d, want %d", name, size, n[i].size);
        OK(MPI_Type_get_envelope(n[i].t, &ni, &na, &nd, &comb));
        CHECK(comb == MPI_COMBINER_NAMED && ni + na + nd == 0, "%s: not named", name);
    }
}

static void test_errors(void)
{
    MPI_Datatype t;
    int ni, in[4];
    t_expect_err(MPI_Type_get_contents(MPI_INT, 0, 0, 0, in, NULL, NULL), MPI_ERR_TYPE,
                 "MPI_Type_get_contents", "contents of a named type");
    t_expect_err(MPI_Type_get_envelope(MPI_DATATYPE_NULL, &ni, &ni, &ni, &ni), MPI_ERR_TYPE,
                 "MPI_Type_get_envelope", "envelope of MPI_DATATYPE_NULL");
    t_expect_err(MPI_Type_get_envelope(MPI_INT, &ni, NULL, &ni, &ni), MPI_ERR_ARG,
                 "MPI_Type_get_envelope", "NULL num_addresses");
    OK(MPI_Type_vector(2, 1, 3, MPI_INT, &t));
    MPI_Datatype d;
    t_expect_err(MPI_Type_get_contents(t, 2, 0, 1, in, NULL, &d), MPI_ERR_ARG,
                 "MPI_Type_get_contents", "max_integers too small");
    t_expect_err(MPI_Type_get_contents(t, 3, 0, 0, in, NULL, &d), MPI_ERR_ARG,
                 "MPI_Type_get_contents", "max_datatypes too small");
    t_expect_err(MPI_Type_get_contents(t, 3, 0, 1, NULL, NULL, &d), MPI_ERR_ARG,
                 "MPI_Type_get_contents", "NULL array_of_integers");
    OK(MPI_Type_free(&t));
    MPI_Aint disp[2] = { 0, 8 };
    t_expect_err(MPI_Type_create_hindexed_block(-1, 1, disp, MPI_INT, &t), MPI_ERR_COUNT,
                 "MPI_Type_create_hindexed_block", "negative count");
    t_expect_err(MPI_Type_create_hindexed_block(2, -1, disp, MPI_INT, &t), MPI_ERR_ARG,
                 "MPI_Type_create_hindexed_block", "negative blocklength");
    t_expect_err(MPI_Type_create_hindexed_block(2, 1, NULL, MPI_INT, &t), MPI_ERR_ARG,
                 "MPI_Type_create_hindexed_block", "NULL displacements");
    t_expect_err(MPI_Type_create_hindexed_block(2, 1, disp, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE,
                 "MPI_Type_create_hindexed_block", "null oldtype");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (unsigned char)(i * 7 + 1);
    test_round_trips();
    test_f90();
    test_names();
    test_errors();
    MPI_Finalize();
    printf("t_dt_envelope: OK\n");
    return 0;
}
