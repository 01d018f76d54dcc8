/* Caching (MPI-3.1 6.7; core/attr.c, vmpi_attr_ and vmpi_keyval_) and user
 * error handlers and error classes (MPI-3.1 8.3-8.5; core/err.c, vmpi_errh_).
 *
 * Keyvals. A keyval belongs to one object kind (communicator, datatype,
 * window; MPI-1 keyvals are communicator ones) and carries the copy and
 * delete callbacks and their extra_state. Handles use MPICH's layout:
 * kind 3, object 9 (keyval), the object kind in bits 22-25 (1 comm, 3
 * datatype, 8 window, as in MPICH's predefined MPI_TAG_UB 0x64400001 and
 * MPI_WIN_BASE 0x66000001), a never-reused index below, so a stale handle
 * stays invalid. A keyval lives while the user has not freed it or an
 * attribute uses it (one reference each): delete callbacks run after
 * MPI_Comm_free_keyval still find it.
 *
 * Attributes. An object's attributes are a list, newest first: lookups walk
 * a few nodes, and deleting from the head is the LIFO order MPI-3.1 8.7.1
 * asks for on MPI_COMM_SELF at MPI_Finalize. A communicator keeps its list
 * in the object (mpi4py reads one on every pickled message); datatypes and
 * windows with attributes are found in a side list by handle. */
#ifndef VMPI_CORE_ATTR_H
#define VMPI_CORE_ATTR_H

#include <mpi.h>
#include <stdbool.h>

enum { VMPI_ATTR_COMM = 1, VMPI_ATTR_TYPE = 3, VMPI_ATTR_WIN = 8 };

/* Copy and delete callbacks of every kind: the object handles are ints. */
typedef int(vmpi_attr_copy_fn)(int obj, int keyval, void *extra, void *in, void *out,
                               int *flag);
typedef int(vmpi_attr_delete_fn)(int obj, int keyval, void *val, void *extra);

struct vmpi_keyval {
    int handle;
    int kind; /* VMPI_ATTR_* */
    int refs; /* the user's (until freed) + one per attribute */
    bool freed;
    vmpi_attr_copy_fn *copy;
    vmpi_attr_delete_fn *del;
    void *extra;
};

struct vmpi_attr {
    struct vmpi_attr *next;
    struct vmpi_keyval *kv;
    void *val;
};

/* MPI_KEYVAL_INVALID or a handle; 0 when out of memory or handles. */
int vmpi_keyval_new(int kind, vmpi_attr_copy_fn *copy, vmpi_attr_delete_fn *del, void *extra);
/* The live keyval a handle names (freed by the user or not), else NULL. */
struct vmpi_keyval *vmpi_keyval_get(int handle);
/* Drops the user's reference; a second free of a live keyval does nothing. */
void vmpi_keyval_free(struct vmpi_keyval *kv);
/* A predefined attribute key (MPI_TAG_UB ..., MPI_WIN_BASE ...). */
bool vmpi_keyval_predefined(int handle);

/* The list head of object `obj` of `kind`: a communicator's own, or its
 * entry in the side list (made when `make`; NULL if none or no memory). */
struct vmpi_attr **vmpi_attr_list(int kind, int obj, bool make);

/* Each returns MPI_SUCCESS or the error code a callback returned (or
 * MPI_ERR_NO_MEM); the lists stay consistent either way. */
/* Sets (replacing: the old value's delete callback runs first). */
int vmpi_attr_set(struct vmpi_attr **list, int obj, struct vmpi_keyval *kv, void *val);
/* The value, or false when the object has no attribute for kv. */
bool vmpi_attr_get(struct vmpi_attr *list, const struct vmpi_keyval *kv, void **val);
/* Deletes one; an absent attribute is no error. */
int vmpi_attr_delete(struct vmpi_attr **list, int obj, struct vmpi_keyval *kv);
/* Runs the delete callbacks newest first, unlinking each that succeeds;
 * stops at the first failure. */
int vmpi_attr_clear(struct vmpi_attr **list, int obj);
/* The copy callbacks of `from`'s attributes, keeping those they ask for
 * on `to` in the same order; on failure `to` is cleared again. */
int vmpi_attr_copy(struct vmpi_attr *from, int oldobj, struct vmpi_attr **to, int newobj);
/* Frees a list without callbacks (objects freed at MPI_Finalize). */
void vmpi_attr_drop(struct vmpi_attr **list);
/* A datatype or window is gone: its side-list entry goes too. */
void vmpi_attr_forget(int kind, int obj);
/* MPI_Finalize's first step: MPI_COMM_SELF's attributes, then
 * MPI_COMM_WORLD's, are deleted with their callbacks (MPI-3.1 8.7.1). */
void vmpi_attr_finalize_comms(void);
/* The end of MPI_Finalize: what is left (side list, keyvals) is freed. */
void vmpi_attr_finalize(void);

/* ---- user error handlers, classes and codes (core/err.c) -----------------
 * A user handler is an object (kind 3, object 5) with a reference count:
 * one for the handle until MPI_Errhandler_free, one per communicator or
 * window using it. */
typedef void(vmpi_errh_fn)(int *obj, int *code, ...);
/* A file's handler gets an MPI_File (a pointer type) holding the file's
 * int handle (io/io.h). */
enum { VMPI_ERRH_COMM = 1, VMPI_ERRH_WIN = 2, VMPI_ERRH_FILE = 3 };
/* A new handler of kind VMPI_ERRH_*; MPI_ERRHANDLER_NULL if out of memory. */
MPI_Errhandler vmpi_errh_new(int kind, vmpi_errh_fn *fn);
/* Whether e is a predefined handler or a live user one of `kind`. */
bool vmpi_errh_valid(MPI_Errhandler e, int kind);
void vmpi_errh_retain(MPI_Errhandler e);
void vmpi_errh_release(MPI_Errhandler e);
struct vmpi_comm;
void vmpi_errh_set(struct vmpi_comm *c, MPI_Errhandler e); /* (windows: their comm's) */
void vmpi_errh_finalize(void);

/* User error classes and codes (MPI_Add_error_*): values above
 * MPI_ERR_LASTCODE, VMPI_ERR_DYN | index. */
#define VMPI_ERR_DYN 0x40000000
int vmpi_err_add(int errclass); /* a new code of errclass (itself for a new class: -1) */
bool vmpi_err_dyn_valid(int code);
int vmpi_err_dyn_class(int code);
const char *vmpi_err_dyn_text(int code); /* "" until MPI_Add_error_string for it */
int vmpi_err_dyn_set_text(int code, const char *text);
/* Any code's class: predefined, or user-defined. */
int vmpi_err_class_of(int code);
extern int vmpi_err_lastused; /* the MPI_LASTUSEDCODE attribute */

#endif
