/* Datatypes (core/dtype.c, vmpi_dtype_) and reduction operations
 * (core/op.c, vmpi_op_): the part of core that knows data layouts; the
 * struct bodies are in dtype_impl.h. */
#ifndef VMPI_CORE_DTYPE_H
#define VMPI_CORE_DTYPE_H

#include "../base/base.h"
#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- datatypes (core/dtype.c) ------------------------------------------- */
struct vmpi_dtype;
struct vmpi_dtype *vmpi_dtype_get(MPI_Datatype h);      /* NULL: invalid or freed */
bool vmpi_dtype_is_contig(const struct vmpi_dtype *dt);  /* committed data is one block */
MPI_Count vmpi_dtype_size(const struct vmpi_dtype *dt);  /* bytes of data per element */
MPI_Aint vmpi_dtype_extent(const struct vmpi_dtype *dt);
MPI_Aint vmpi_dtype_true_lb(const struct vmpi_dtype *dt);
bool vmpi_dtype_committed(const struct vmpi_dtype *dt);
/* Bytes [off, off+max) of the packed form of (buf, count, dt) go to out;
 * returns the bytes written. Whole contiguous blocks are copied at once. */
size_t vmpi_dtype_pack(void *out, const void *buf, MPI_Count count,
                       const struct vmpi_dtype *dt, size_t off, size_t max);
/* The reverse: len bytes of packed stream starting at off go into (buf, count, dt). */
size_t vmpi_dtype_unpack(void *buf, MPI_Count count, const struct vmpi_dtype *dt,
                         size_t off, const void *in, size_t len);
/* Basic elements in `bytes` bytes of packed data, or MPI_UNDEFINED. */
MPI_Count vmpi_dtype_elements(const struct vmpi_dtype *dt, MPI_Count bytes);
int vmpi_dtype_init(void);
void vmpi_dtype_finalize(void);

/* ---- reduction operations (core/op.c) ----------------------------------- */
/* MPI_SUCCESS, or MPI_ERR_OP if op is invalid (or freed) or not defined for
 * dt. A user op is defined on every type. */
int vmpi_op_check(MPI_Op op, const struct vmpi_dtype *dt);
/* inout = in op inout, element-wise over (count, dt) layouts; in is the left
 * operand. A user function gets the handle of dt and a piece of at most
 * INT_MAX elements at a time. */
void vmpi_op_apply(MPI_Op op, const void *in, void *inout, MPI_Count count,
                   const struct vmpi_dtype *dt);
bool vmpi_op_commutative(MPI_Op op); /* false for user ops created non-commutative */
/* User operations. vmpi_op_free (MPI_Op_free) makes the handle invalid for
 * the user; an operation that may still apply the op after it returns to
 * the user (a non-blocking collective) holds a reference from vmpi_op_retain
 * to vmpi_op_release, and the op lives until the last one goes. Both are
 * no-ops on predefined ops. */
int vmpi_op_create(MPI_User_function *fn, bool commute, MPI_Op *out); /* or MPI_ERR_NO_MEM */
int vmpi_op_free(MPI_Op op); /* MPI_ERR_OP unless a live user op */
bool vmpi_op_is_user(MPI_Op op); /* a live (not freed) user op */
void vmpi_op_retain(MPI_Op op);
void vmpi_op_release(MPI_Op op);

#endif
