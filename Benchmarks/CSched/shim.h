// What the benchmark harness needs from glibc that is declared only under
// _GNU_SOURCE, which Swift's Glibc module does not define: CPU affinity
// (sched_setaffinity and the CPU_* macros), and memfd_create with the seals
// for the by-hand memory file a peer makes; and glibc's malloc_trim, which
// Swift's Glibc module does not declare, for the peak-memory notes.
#ifndef CSCHED_SHIM_H
#define CSCHED_SHIM_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <malloc.h>

/// Lets thread `tid` (0: the calling thread) run on the `count` CPUs in
/// `cpus` only. Returns 0 or -errno.
static inline int csched_set(int tid, const int *cpus, int count) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int i = 0; i < count; i++) if (cpus[i] >= 0 && cpus[i] < CPU_SETSIZE) CPU_SET(cpus[i], &set);
    return sched_setaffinity(tid, sizeof set, &set) == 0 ? 0 : -errno;
}

/// The CPUs the calling thread may run on, into `cpus` (room for `room`);
/// returns how many, or -errno.
static inline int csched_get(int *cpus, int room) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return -errno;
    int n = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && n < room; cpu++) if (CPU_ISSET(cpu, &set)) cpus[n++] = cpu;
    return n;
}

/// A memory file holding the `count` bytes at `bytes`, made as a program
/// would make one by hand: memfd_create, one write, all four seals. Returns
/// its (sealed, read-write) descriptor, or -errno.
static inline int csched_sealed_memfd(const void *bytes, size_t count) {
    int fd = memfd_create("peer", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return -errno;
    size_t done = 0;
    while (done < count) {
        ssize_t n = write(fd, (const char *)bytes + done, count - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) { int e = n < 0 ? errno : EIO; close(fd); return -e; }
        done += (size_t)n;
    }
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

/// Gives free heap back to the kernel (glibc's malloc_trim); returns 1
/// if any was.
static inline int csched_malloc_trim(void) { return malloc_trim(0); }

#endif
