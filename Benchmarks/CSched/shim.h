// CPU affinity for the benchmark harness: glibc declares sched_setaffinity
// and the CPU_* macros only under _GNU_SOURCE, which Swift's Glibc module
// does not define.
#ifndef CSCHED_SHIM_H
#define CSCHED_SHIM_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <errno.h>

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
#endif
