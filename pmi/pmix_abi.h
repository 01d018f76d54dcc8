/* The few PMIx types, constants and functions vmpi's PMIx client uses,
 * declared here rather than taken from pmix.h: libpmix is loaded with
 * dlopen only when a PMIx process manager started the job, so vmpi builds
 * (and runs under every other launcher) without libpmix or its headers,
 * which Debian keeps off the default include path anyway
 * (/usr/lib/x86_64-linux-gnu/pmix2/include). The numbers are those of
 * pmix_common.h of PMIx 3 to 5, the releases behind libpmix.so.2 with this
 * layout (pmix.c refuses older ones); tests/py/test_pmix_abi.py compiles
 * this header against the real one where it is installed and compares
 * every value, size and offset. */
#ifndef VMPI_PMI_PMIX_ABI_H
#define VMPI_PMI_PMIX_ABI_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VMPIX_SONAME "libpmix.so.2"
#define VMPIX_MAX_NSLEN 255
#define VMPIX_MAX_KEYLEN 511
#define VMPIX_RANK_UNDEF UINT32_MAX
#define VMPIX_RANK_WILDCARD (UINT32_MAX - 1)

#define VMPIX_SUCCESS 0
#define VMPIX_ERR_NOT_FOUND (-46)
#define VMPIX_ERR_NOT_SUPPORTED (-47)

/* pmix_data_type_t values */
#define VMPIX_BOOL 1
#define VMPIX_STRING 3
#define VMPIX_SIZE 4
#define VMPIX_INT 6
#define VMPIX_INT32 9
#define VMPIX_UINT 11
#define VMPIX_UINT16 13
#define VMPIX_UINT32 14
#define VMPIX_PROC_RANK 40

/* pmix_scope_t: a put visible to every process of the job */
#define VMPIX_GLOBAL 3

/* Attribute keys */
#define VMPIX_JOB_SIZE "pmix.job.size"
#define VMPIX_UNIV_SIZE "pmix.univ.size"
#define VMPIX_APPNUM "pmix.appnum"
#define VMPIX_COLLECT_DATA "pmix.collect"
#define VMPIX_HOST "pmix.host"

typedef int vmpix_status_t;

typedef struct {
    char nspace[VMPIX_MAX_NSLEN + 1];
    uint32_t rank;
} vmpix_proc_t;

/* pmix_value_t: a type tag and a union whose largest member (pmix_envar_t,
 * two pointers and a char) takes 24 bytes; only the members used here are
 * named. */
typedef struct {
    uint16_t type;
    union {
        bool flag;
        char *string;
        size_t size;
        int integer;
        int32_t int32;
        unsigned int uint;
        uint16_t uint16;
        uint32_t uint32;
        uint64_t pad[3];
    } data;
} vmpix_value_t;

typedef struct {
    char key[VMPIX_MAX_KEYLEN + 1];
    uint32_t flags;
    vmpix_value_t value;
} vmpix_info_t;

/* pmix_app_t: one command of a PMIx_Spawn. */
typedef struct {
    char *cmd;
    char **argv; /* argv[0] is the command, NULL-terminated */
    char **env;  /* NAME=VALUE strings set in its processes, NULL-terminated */
    char *cwd;
    int maxprocs;
    vmpix_info_t *info;
    size_t ninfo;
} vmpix_app_t;

static_assert(sizeof(vmpix_proc_t) == 260, "pmix_proc_t is 260 bytes");
static_assert(sizeof(vmpix_app_t) == 56 && offsetof(vmpix_app_t, info) == 40,
              "pmix_app_t is 56 bytes, its info at 40");
static_assert(sizeof(vmpix_value_t) == 32, "pmix_value_t is 32 bytes");
static_assert(sizeof(vmpix_info_t) == 552 && offsetof(vmpix_info_t, value) == 520,
              "pmix_info_t is 552 bytes, its value at 520");

/* The entry points, as pointers filled by dlsym. */
struct vmpix_api {
    const char *(*get_version)(void);
    vmpix_status_t (*init)(vmpix_proc_t *proc, vmpix_info_t info[], size_t ninfo);
    vmpix_status_t (*finalize)(const vmpix_info_t info[], size_t ninfo);
    vmpix_status_t (*abort)(int status, const char msg[], vmpix_proc_t procs[], size_t nprocs);
    vmpix_status_t (*put)(uint8_t scope, const char key[], vmpix_value_t *val);
    vmpix_status_t (*commit)(void);
    vmpix_status_t (*fence)(const vmpix_proc_t procs[], size_t nprocs, const vmpix_info_t info[],
                            size_t ninfo);
    vmpix_status_t (*get)(const vmpix_proc_t *proc, const char key[], const vmpix_info_t info[],
                          size_t ninfo, vmpix_value_t **val);
    void (*value_destruct)(vmpix_value_t *val);
    vmpix_status_t (*spawn)(const vmpix_info_t job_info[], size_t ninfo,
                            const vmpix_app_t apps[], size_t napps,
                            char nspace[VMPIX_MAX_NSLEN + 1]);
    const char *(*error_string)(vmpix_status_t status);
};

#endif
