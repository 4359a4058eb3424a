#define _GNU_SOURCE
#include "CAssetShim.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define RETURN_OR_ERRNO(expr) do { long r_ = (long)(expr); return r_ < 0 ? -errno : r_; } while (0)

const int cas_o_path = O_PATH;

int cas_openat(int dirfd, const char *path, int flags, mode_t mode) {
    RETURN_OR_ERRNO(openat(dirfd, path, flags | O_CLOEXEC, mode));
}

int cas_open_tmpfile(int dirfd, mode_t mode) {
    RETURN_OR_ERRNO(openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, mode));
}

int cas_link_tmpfile(int fd, int dirfd, const char *path) {
    if (linkat(fd, "", dirfd, path, AT_EMPTY_PATH) == 0) return 0;
    if (errno != ENOENT && errno != EPERM) return -errno;
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    RETURN_OR_ERRNO(linkat(AT_FDCWD, proc, dirfd, path, AT_SYMLINK_FOLLOW));
}

int cas_reopen_readonly(int fd) {
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    RETURN_OR_ERRNO(open(proc, O_RDONLY | O_CLOEXEC));
}

int cas_dup_cloexec(int fd) {
    RETURN_OR_ERRNO(fcntl(fd, F_DUPFD_CLOEXEC, 0));
}

int cas_close(int fd) {
    RETURN_OR_ERRNO(close(fd));
}

static void fill_stat(const struct stat *st, uint32_t *mode, int64_t *size, uint64_t *inode, uint64_t *device) {
    if (mode) *mode = st->st_mode;
    if (size) *size = st->st_size;
    if (inode) *inode = st->st_ino;
    if (device) *device = st->st_dev;
}

int cas_fstat(int fd, uint32_t *mode, int64_t *size, uint64_t *inode, uint64_t *device) {
    struct stat st;
    if (fstat(fd, &st) != 0) return -errno;
    fill_stat(&st, mode, size, inode, device);
    return 0;
}

int cas_fstatat(int dirfd, const char *path, int nofollow,
                uint32_t *mode, int64_t *size, uint64_t *inode, uint64_t *device) {
    struct stat st;
    if (fstatat(dirfd, path, &st, nofollow ? AT_SYMLINK_NOFOLLOW : 0) != 0) return -errno;
    fill_stat(&st, mode, size, inode, device);
    return 0;
}

int cas_fstat_owner(int fd, uint32_t *uid, uint32_t *gid) {
    struct stat st;
    if (fstat(fd, &st) != 0) return -errno;
    *uid = (uint32_t)st.st_uid;
    *gid = (uint32_t)st.st_gid;
    return 0;
}

ssize_t cas_pread_full(int fd, void *buffer, size_t count, int64_t offset) {
    size_t done = 0;
    while (done < count) {
        ssize_t n = pread(fd, (char *)buffer + done, count - done, offset + (int64_t)done);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        if (n == 0) break;
        done += (size_t)n;
    }
    return (ssize_t)done;
}

ssize_t cas_pwrite_full(int fd, const void *buffer, size_t count, int64_t offset) {
    size_t done = 0;
    while (done < count) {
        ssize_t n = pwrite(fd, (const char *)buffer + done, count - done, offset + (int64_t)done);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        done += (size_t)n;
    }
    return (ssize_t)done;
}

ssize_t cas_write_full(int fd, const void *buffer, size_t count) {
    size_t done = 0;
    while (done < count) {
        ssize_t n = write(fd, (const char *)buffer + done, count - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        done += (size_t)n;
    }
    return (ssize_t)done;
}

ssize_t cas_read(int fd, void *buffer, size_t count) {
    RETURN_OR_ERRNO(read(fd, buffer, count));
}

int64_t cas_lseek(int fd, int64_t offset, int whence) {
    off_t r = lseek(fd, (off_t)offset, whence);
    return r < 0 ? -errno : (int64_t)r;
}

int cas_fsync(int fd) {
    RETURN_OR_ERRNO(fsync(fd));
}

int cas_ftruncate(int fd, int64_t length) {
    RETURN_OR_ERRNO(ftruncate(fd, (off_t)length));
}

int cas_allocate(int fd, int64_t offset, int64_t count) {
    RETURN_OR_ERRNO(fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)offset, (off_t)count));
}

int cas_punch_hole(int fd, int64_t offset, int64_t count) {
    RETURN_OR_ERRNO(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)offset, (off_t)count));
}

int cas_start_writeback(int fd, int64_t offset, int64_t count) {
    RETURN_OR_ERRNO(sync_file_range(fd, (off_t)offset, (off_t)count, SYNC_FILE_RANGE_WRITE));
}

ssize_t cas_copy_file_range(int in_fd, int64_t *in_off, int out_fd, int64_t *out_off, size_t count) {
    loff_t in = (loff_t)*in_off, out = (loff_t)*out_off;
    ssize_t n = copy_file_range(in_fd, &in, out_fd, &out, count, 0);
    if (n < 0) return -errno;
    *in_off = (int64_t)in;
    *out_off = (int64_t)out;
    return n;
}

int cas_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned flags) {
    unsigned f = 0;
    if (flags & CAS_RENAME_NOREPLACE) f |= RENAME_NOREPLACE;
    if (flags & CAS_RENAME_EXCHANGE) f |= RENAME_EXCHANGE;
    RETURN_OR_ERRNO(renameat2(olddirfd, oldpath, newdirfd, newpath, f));
}

int cas_linkat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath) {
    RETURN_OR_ERRNO(linkat(olddirfd, oldpath, newdirfd, newpath, 0));
}

int cas_unlinkat(int dirfd, const char *path, int dir) {
    RETURN_OR_ERRNO(unlinkat(dirfd, path, dir ? AT_REMOVEDIR : 0));
}

int cas_mkdirat(int dirfd, const char *path, mode_t mode) {
    RETURN_OR_ERRNO(mkdirat(dirfd, path, mode));
}

int cas_mmap_readonly(int fd, size_t length, void **address) {
    void *p = mmap(NULL, length, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) return -errno;
    *address = p;
    return 0;
}

/* cas_give_way's per-thread state: whether the thread runs at background
 * priority (0: not known yet, 1: yes, -1: no), and when it last gave way. */
static __thread int cas_way_background;
static __thread uint64_t cas_way_since;

static uint64_t cas_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int cas_thread_enter_background(void) {
    // Linux: PRIO_PROCESS with 0 is the calling thread (nice is per thread).
    if (setpriority(PRIO_PROCESS, 0, 19) != 0) return -errno;
    cas_way_background = 1;
    cas_way_since = cas_monotonic_ns();
    struct sched_param param = { .sched_priority = 0 };
    return sched_setscheduler(0, SCHED_BATCH, &param) == 0 ? 0 : 1;
}

/* struct sched_attr of sched_getattr(2), which glibc 2.36 does not declare. */
struct cas_sched_attr {
    uint32_t size, sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime, sched_deadline, sched_period;
};

void cas_thread_priority(int *policy, int *nice) {
    // One system call for both; two where sched_getattr is missing or refused.
    struct cas_sched_attr attr = { .size = sizeof attr };
    if (syscall(SYS_sched_getattr, 0, &attr, sizeof attr, 0) == 0) {
        *policy = (int)attr.sched_policy;
        *nice = attr.sched_nice;
        return;
    }
    *policy = sched_getscheduler(0);
    *nice = getpriority(PRIO_PROCESS, 0);
}

int cas_thread_is_background(void) {
    int policy, nice;
    cas_thread_priority(&policy, &nice);
    return policy == SCHED_IDLE || nice >= 19;
}

int cas_gettid(void) { return (int)gettid(); }

int cas_give_way(uint64_t interval_ns) {
    if (cas_way_background < 0) return 0;
    uint64_t now = cas_monotonic_ns();
    if (cas_way_background == 0) {
        cas_way_background = cas_thread_is_background() ? 1 : -1;
        cas_way_since = now;
        return 0;
    }
    if (now - cas_way_since < interval_ns) return 0;
    sched_yield();
    cas_way_since = cas_monotonic_ns();
    return 1;
}

/* The background thread's queue: a singly linked list in order, under one
 * mutex; the thread sleeps on the condition variable while it is empty. */
struct cas_job { struct cas_job *next; void (*fn)(void *); void *context; };
static pthread_mutex_t cas_jobs_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cas_jobs_ready = PTHREAD_COND_INITIALIZER;
static struct cas_job *cas_jobs_head, *cas_jobs_tail;
static pid_t cas_jobs_owner; /* the process whose thread serves the queue, 0 for none */

static void *cas_background_main(void *unused) {
    (void)unused;
    (void)cas_thread_enter_background();
    for (;;) {
        pthread_mutex_lock(&cas_jobs_lock);
        while (cas_jobs_head == NULL) pthread_cond_wait(&cas_jobs_ready, &cas_jobs_lock);
        struct cas_job *job = cas_jobs_head;
        cas_jobs_head = job->next;
        if (cas_jobs_head == NULL) cas_jobs_tail = NULL;
        pthread_mutex_unlock(&cas_jobs_lock);
        job->fn(job->context);
        free(job);
    }
    return NULL;
}

/* In a forked child the thread is gone and the lock may be held: start over
 * (the parent's queued jobs are its own). */
static void cas_background_after_fork(void) {
    pthread_mutex_init(&cas_jobs_lock, NULL);
    pthread_cond_init(&cas_jobs_ready, NULL);
    cas_jobs_head = cas_jobs_tail = NULL;
    cas_jobs_owner = 0;
}

static void cas_background_register_fork(void) { pthread_atfork(NULL, NULL, cas_background_after_fork); }

int cas_background_submit(void (*fn)(void *context), void *context) {
    struct cas_job *job = malloc(sizeof *job);
    if (job == NULL) return -ENOMEM;
    job->next = NULL;
    job->fn = fn;
    job->context = context;
    pthread_mutex_lock(&cas_jobs_lock);
    if (cas_jobs_owner != getpid()) {
        static pthread_once_t registered = PTHREAD_ONCE_INIT;
        pthread_once(&registered, cas_background_register_fork);
        pthread_t thread;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int error = pthread_create(&thread, &attr, cas_background_main, NULL);
        pthread_attr_destroy(&attr);
        if (error != 0) {
            pthread_mutex_unlock(&cas_jobs_lock);
            free(job);
            return -error;
        }
        cas_jobs_owner = getpid();
    }
    if (cas_jobs_tail != NULL) cas_jobs_tail->next = job; else cas_jobs_head = job;
    cas_jobs_tail = job;
    pthread_cond_signal(&cas_jobs_ready);
    pthread_mutex_unlock(&cas_jobs_lock);
    return 0;
}

int cas_mmap_writable(int fd, size_t length, void **address) {
    void *p = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) return -errno;
    *address = p;
    return 0;
}

int cas_munmap(void *address, size_t length) {
    RETURN_OR_ERRNO(munmap(address, length));
}

int cas_madvise(void *address, size_t length, int advice) {
    static const int map[] = { MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL, MADV_WILLNEED, MADV_DONTNEED };
    if (advice < 0 || advice > 4) return -EINVAL;
    RETURN_OR_ERRNO(madvise(address, length, map[advice]));
}

size_t cas_page_size(void) {
    return (size_t)sysconf(_SC_PAGESIZE);
}

int cas_memfd_create(const char *name) {
    RETURN_OR_ERRNO(memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING));
}

int cas_memfd_seal(int fd) {
    RETURN_OR_ERRNO(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL));
}

int cas_memfd_seals(int fd) {
    RETURN_OR_ERRNO(fcntl(fd, F_GET_SEALS));
}

int cas_ofd_lock(int fd, int type, int wait) {
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = type == CAS_LOCK_SHARED ? F_RDLCK : type == CAS_LOCK_EXCLUSIVE ? F_WRLCK : F_UNLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = 0;
    fl.l_len = 0;
    RETURN_OR_ERRNO(fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl));
}

int cas_ofd_conflict(int fd, int type, int32_t *pid) {
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = type == CAS_LOCK_SHARED ? F_RDLCK : F_WRLCK;
    fl.l_whence = SEEK_SET;
    if (fcntl(fd, F_OFD_GETLK, &fl) != 0) return -errno;
    if (fl.l_type == F_UNLCK) return 0;
    *pid = (int32_t)fl.l_pid;
    return 1;
}

int cas_fchmod_owned(int fd, uint32_t clear, uint32_t set) {
    struct stat st;
    if (fstat(fd, &st) != 0) return -errno;
    mode_t old = st.st_mode & 07777, mode = (mode_t)(((old & ~clear) | set) & 07777);
    if (mode == old || st.st_uid != geteuid()) return 0;
    RETURN_OR_ERRNO(fchmod(fd, mode) == 0 ? 1 : -1);
}

int cas_ofd_probe(int fd) {
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    if (fcntl(fd, F_OFD_GETLK, &fl) != 0) return -errno;
    return fl.l_type == F_UNLCK ? 0 : 1;
}

ssize_t cas_send_with_fd(int sock, const void *data, size_t count, int fd) {
    struct iovec iov = { .iov_base = (void *)data, .iov_len = count };
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } control;
    if (fd >= 0) {
        memset(&control, 0, sizeof control);
        msg.msg_control = control.buf;
        msg.msg_controllen = sizeof control.buf;
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    RETURN_OR_ERRNO(sendmsg(sock, &msg, MSG_NOSIGNAL));
}

ssize_t cas_recv_with_fd(int sock, void *data, size_t capacity, int *fd) {
    struct iovec iov = { .iov_base = data, .iov_len = capacity };
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    union { char buf[CMSG_SPACE(sizeof(int) * 4)]; struct cmsghdr align; } control;
    msg.msg_control = control.buf;
    msg.msg_controllen = sizeof control.buf;
    *fd = -1;
    ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0) return -errno;
    int bad = (msg.msg_flags & MSG_CTRUNC) != 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < k; i++) {
            int got;
            memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
            if (*fd == -1 && !bad) *fd = got;
            else { close(got); bad = 1; }
        }
    }
    if (bad) {
        if (*fd >= 0) close(*fd);
        *fd = -1;
        return -EBADMSG;
    }
    return n;
}

int cas_peer_credentials(int sock, int32_t *pid, uint32_t *uid, uint32_t *gid) {
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -errno;
    *pid = cred.pid;
    *uid = cred.uid;
    *gid = cred.gid;
    return 0;
}

static int fill_address(struct sockaddr_un *addr, const char *path) {
    memset(addr, 0, sizeof *addr);
    addr->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof addr->sun_path) return -ENAMETOOLONG;
    strcpy(addr->sun_path, path);
    return 0;
}

int cas_unix_listen(const char *path, mode_t mode, int backlog) {
    struct sockaddr_un addr;
    int r = fill_address(&addr, path);
    if (r < 0) return r;
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return -errno;
    /* Bind with a restrictive umask so the socket is never briefly wider than mode. */
    mode_t old = umask(0777 & ~mode);
    int b = bind(s, (struct sockaddr *)&addr, sizeof addr);
    int e = errno;
    umask(old);
    if (b != 0) { close(s); return -e; }
    if (chmod(path, mode) != 0 || listen(s, backlog) != 0) {
        e = errno;
        close(s);
        return -e;
    }
    return s;
}

int cas_unix_listener_check(int fd, char *path, size_t capacity) {
    int value = 0;
    socklen_t length = sizeof value;
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &value, &length) != 0) return -errno;
    if (value != AF_UNIX) return -EAFNOSUPPORT;
    length = sizeof value;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &value, &length) != 0) return -errno;
    if (value != SOCK_STREAM) return -ESOCKTNOSUPPORT;
    length = sizeof value;
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &value, &length) != 0) return -errno;
    if (!value) return -EINVAL;
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    length = sizeof addr;
    if (getsockname(fd, (struct sockaddr *)&addr, &length) != 0) return -errno;
    if (capacity > 0) {
        size_t n = 0;
        size_t room = length > offsetof(struct sockaddr_un, sun_path) ? length - offsetof(struct sockaddr_un, sun_path) : 0;
        if (room > 0 && addr.sun_path[0] != '\0') {
            n = strnlen(addr.sun_path, room < sizeof addr.sun_path ? room : sizeof addr.sun_path);
            if (n >= capacity) n = capacity - 1;
            memcpy(path, addr.sun_path, n);
        }
        path[n] = '\0';
    }
    RETURN_OR_ERRNO(fcntl(fd, F_SETFD, FD_CLOEXEC));
}

int cas_unix_connect(const char *path) {
    struct sockaddr_un addr;
    int r = fill_address(&addr, path);
    if (r < 0) return r;
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return -errno;
    if (connect(s, (struct sockaddr *)&addr, sizeof addr) != 0) { int e = errno; close(s); return -e; }
    return s;
}

int cas_accept(int sock) {
    RETURN_OR_ERRNO(accept4(sock, NULL, NULL, SOCK_CLOEXEC));
}

int cas_socketpair(int fds[2]) {
    RETURN_OR_ERRNO(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds));
}

int cas_socket_timeouts(int sock, int milliseconds) {
    struct timeval tv = { .tv_sec = milliseconds / 1000, .tv_usec = (milliseconds % 1000) * 1000 };
    if (setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0) return -errno;
    RETURN_OR_ERRNO(setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv));
}

int cas_shutdown(int sock) {
    RETURN_OR_ERRNO(shutdown(sock, SHUT_RDWR));
}

int cas_poll_readable(const int *fds, int count, int timeout_ms, uint64_t *ready) {
    if (count < 0 || count > 64) return -EINVAL;
    struct pollfd p[64];
    for (int i = 0; i < count; i++) {
        p[i].fd = fds[i];
        p[i].events = POLLIN;
        p[i].revents = 0;
    }
    int n = poll(p, (nfds_t)count, timeout_ms);
    if (n < 0) return -errno;
    uint64_t mask = 0;
    for (int i = 0; i < count; i++) {
        if (p[i].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) mask |= (uint64_t)1 << i;
    }
    *ready = mask;
    return n;
}

int cas_chgrp(const char *path, uint32_t gid) {
    RETURN_OR_ERRNO(fchownat(AT_FDCWD, path, (uid_t)-1, (gid_t)gid, AT_SYMLINK_NOFOLLOW));
}

/* ---- HTTP server (AssetServer) ------------------------------------------------ */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <linux/openat2.h>

_Static_assert(CAS_EVENT_IN == EPOLLIN && CAS_EVENT_OUT == EPOLLOUT && CAS_EVENT_ERR == EPOLLERR
               && CAS_EVENT_HUP == EPOLLHUP && CAS_EVENT_RDHUP == EPOLLRDHUP, "epoll bits");

int cas_tcp_listen(const char *address, int port, int backlog, int *bound_port) {
    struct sockaddr_storage storage;
    socklen_t length;
    memset(&storage, 0, sizeof storage);
    struct sockaddr_in *v4 = (struct sockaddr_in *)&storage;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&storage;
    if (port < 0 || port > 65535) return -EINVAL;
    if (inet_pton(AF_INET, address, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        length = sizeof *v4;
    } else if (inet_pton(AF_INET6, address, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        length = sizeof *v6;
    } else {
        return -EINVAL;
    }
    int s = socket(storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (s < 0) return -errno;
    int one = 1;
    if (setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0
        || (storage.ss_family == AF_INET6 && setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) != 0)
        || bind(s, (struct sockaddr *)&storage, length) != 0 || listen(s, backlog) != 0
        || getsockname(s, (struct sockaddr *)&storage, &length) != 0) {
        int e = errno;
        close(s);
        return -e;
    }
    *bound_port = ntohs(storage.ss_family == AF_INET ? v4->sin_port : v6->sin6_port);
    return s;
}

int cas_tcp_accept(int sock, char *remote, size_t capacity) {
    struct sockaddr_storage storage;
    socklen_t length = sizeof storage;
    int c = accept4(sock, (struct sockaddr *)&storage, &length, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (c < 0) return -errno;
    int one = 1;
    (void)setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    char host[INET6_ADDRSTRLEN] = "?";
    if (storage.ss_family == AF_INET) {
        struct sockaddr_in *v4 = (struct sockaddr_in *)&storage;
        inet_ntop(AF_INET, &v4->sin_addr, host, sizeof host);
        snprintf(remote, capacity, "%s:%u", host, (unsigned)ntohs(v4->sin_port));
    } else if (storage.ss_family == AF_INET6) {
        struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&storage;
        inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof host);
        snprintf(remote, capacity, "[%s]:%u", host, (unsigned)ntohs(v6->sin6_port));
    } else if (capacity > 0) {
        snprintf(remote, capacity, "-");
    }
    return c;
}

ssize_t cas_send(int sock, const void *data, size_t count, int more) {
    RETURN_OR_ERRNO(send(sock, data, count, MSG_NOSIGNAL | MSG_DONTWAIT | (more ? MSG_MORE : 0)));
}

int cas_shutdown_write(int sock) {
    RETURN_OR_ERRNO(shutdown(sock, SHUT_WR));
}

ssize_t cas_sendfile(int out_fd, int in_fd, int64_t *offset, size_t count) {
    off_t o = (off_t)*offset;
    ssize_t n = sendfile(out_fd, in_fd, &o, count);
    if (n < 0) return -errno;
    *offset = (int64_t)o;
    return n;
}

int cas_epoll_create(void) {
    RETURN_OR_ERRNO(epoll_create1(EPOLL_CLOEXEC));
}

int cas_epoll_ctl(int epfd, int op, int fd, uint32_t events) {
    static const int ops[] = { EPOLL_CTL_ADD, EPOLL_CTL_MOD, EPOLL_CTL_DEL };
    if (op < 0 || op > 2) return -EINVAL;
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = events;
    ev.data.fd = fd;
    RETURN_OR_ERRNO(epoll_ctl(epfd, ops[op], fd, &ev));
}

int cas_epoll_wait(int epfd, int *fds, uint32_t *events, int capacity, int timeout_ms) {
    struct epoll_event ready[256];
    if (capacity > 256) capacity = 256;
    if (capacity <= 0) return -EINVAL;
    int n = epoll_wait(epfd, ready, capacity, timeout_ms);
    if (n < 0) return -errno;
    for (int i = 0; i < n; i++) {
        fds[i] = ready[i].data.fd;
        events[i] = ready[i].events;
    }
    return n;
}

int cas_eventfd(void) {
    RETURN_OR_ERRNO(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
}

int cas_eventfd_signal(int fd) {
    uint64_t one = 1;
    ssize_t n;
    do n = write(fd, &one, sizeof one); while (n < 0 && errno == EINTR);
    return n < 0 && errno != EAGAIN ? -errno : 0;
}

int cas_open_beneath(int dirfd, const char *path, int flags, int allow_openat2, int *used_openat2) {
    *used_openat2 = 0;
    if (allow_openat2) {
        struct open_how how;
        memset(&how, 0, sizeof how);
        how.flags = (uint64_t)(flags | O_CLOEXEC);
        how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
        long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
        if (fd >= 0) { *used_openat2 = 1; return (int)fd; }
        if (errno != ENOSYS && errno != EPERM) { *used_openat2 = 1; return -errno; }
    }
    /* Component by component: every directory on the way, then the file, with O_NOFOLLOW. */
    char *copy = strdup(path);
    if (copy == NULL) return -ENOMEM;
    int current = dirfd, result = 0;
    char *rest = copy;
    while (result == 0) {
        char *slash = strchr(rest, '/');
        if (slash) *slash = '\0';
        int last = slash == NULL;
        int fd;
        if (rest[0] == '\0' || strcmp(rest, ".") == 0) {
            fd = openat(current, ".", last ? flags | O_NOFOLLOW | O_CLOEXEC : O_PATH | O_DIRECTORY | O_CLOEXEC);
        } else if (strcmp(rest, "..") == 0) {
            fd = -1;
            errno = EXDEV;
        } else {
            fd = openat(current, rest, last ? flags | O_NOFOLLOW | O_CLOEXEC : O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (fd < 0) result = -errno;
        if (current != dirfd) close(current);
        if (fd < 0) break;
        if (last) { result = fd; break; }
        current = fd;
        rest = slash + 1;
    }
    free(copy);
    return result;
}

int cas_set_mtime(int fd, int64_t sec) {
    struct timespec times[2] = { { .tv_sec = 0, .tv_nsec = UTIME_OMIT }, { .tv_sec = (time_t)sec, .tv_nsec = 0 } };
    RETURN_OR_ERRNO(futimens(fd, times));
}

int cas_touch_mtime(int fd) {
    struct timespec times[2] = { { .tv_sec = 0, .tv_nsec = UTIME_OMIT }, { .tv_sec = 0, .tv_nsec = UTIME_NOW } };
    RETURN_OR_ERRNO(futimens(fd, times));
}

int cas_fstat_mtime(int fd, uint32_t *mode, int64_t *size, uint64_t *inode,
                    int64_t *mtime_sec, int64_t *mtime_nsec) {
    struct stat st;
    if (fstat(fd, &st) != 0) return -errno;
    fill_stat(&st, mode, size, inode, NULL);
    *mtime_sec = (int64_t)st.st_mtim.tv_sec;
    *mtime_nsec = (int64_t)st.st_mtim.tv_nsec;
    return 0;
}

int64_t cas_raise_descriptor_limit(int64_t wanted) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return -errno;
    if ((int64_t)rl.rlim_cur < wanted) {
        rlim_t target = (rlim_t)wanted;
        if (rl.rlim_max != RLIM_INFINITY && target > rl.rlim_max) target = rl.rlim_max;
        if (target > rl.rlim_cur) {
            rl.rlim_cur = target;
            if (setrlimit(RLIMIT_NOFILE, &rl) != 0) return -errno;
        }
    }
    return rl.rlim_cur == RLIM_INFINITY ? INT64_MAX : (int64_t)rl.rlim_cur;
}

/* ---- end of HTTP server block ------------------------------------------------ */
