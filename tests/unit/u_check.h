/* Checks for the unit tests: a failed check prints where and what, and is
 * counted; main() reports the count and fails when it is not zero. */
#ifndef VMPI_TESTS_U_CHECK_H
#define VMPI_TESTS_U_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (!(cond)) {                                                        \
            failures++;                                                       \
            fprintf(stderr, "%s:%d: FAILED %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                     \
            fputc('\n', stderr);                                              \
        }                                                                     \
    } while (0)

#endif
