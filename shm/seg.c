/* Shared-memory segments. */
#include "seg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

int vmpi_shm_name(char *out, size_t cap, const char *job_id, const char *suffix)
{
    int n = snprintf(out, cap, "/vmpi-%s-%s", job_id, suffix);
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

static void *map_fd(int fd, size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd);
    errno = e;
    return p == MAP_FAILED ? NULL : p;
}

void *vmpi_shm_create(const char *name, size_t size)
{
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return NULL;
    if (ftruncate(fd, (off_t)size) != 0) {
        int e = errno;
        close(fd);
        shm_unlink(name);
        errno = e;
        return NULL;
    }
    void *p = map_fd(fd, size);
    if (!p)
        shm_unlink(name);
    return p;
}

void *vmpi_shm_attach(const char *name, size_t size)
{
    int fd = shm_open(name, O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0)
        return NULL;
    off_t end = lseek(fd, 0, SEEK_END);
    if (end < 0 || (size_t)end < size) {
        close(fd);
        errno = EINVAL;
        return NULL;
    }
    return map_fd(fd, size);
}

void vmpi_shm_unlink(const char *name)
{
    shm_unlink(name);
}

void vmpi_shm_detach(void *base, size_t size)
{
    if (base)
        munmap(base, size);
}
