/*
 * CAssetShim — the Linux system calls that AssetPacks does not spell in Swift.
 *
 * Every function here is a thin wrapper with no policy. Unless a function says
 * otherwise it returns a non-negative value on success and the negated errno on
 * failure (for example -ENOENT), so callers never read the thread-local errno.
 * Functions that loop until a full length is transferred retry EINTR themselves;
 * all others leave EINTR to the caller.
 *
 * Every symbol is prefixed cas_. _GNU_SOURCE is defined only in shim.c.
 */
#ifndef CASSETSHIM_H
#define CASSETSHIM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Opening and closing ------------------------------------------------ */

/** Opens path relative to the directory dirfd (AT_FDCWD for the working
 *  directory). O_CLOEXEC is always added to flags. mode matters only with
 *  O_CREAT or O_TMPFILE. Returns the new descriptor or -errno.
 *  The corresponding C function is openat(2). */
int cas_openat(int dirfd, const char *path, int flags, mode_t mode);

/** The value of O_PATH, for the flags of cas_openat: open a location in the
 *  file system without opening the file itself, so that the descriptor can
 *  name it (fstat, a dirfd, fd passing) but not read or write it. A constant
 *  rather than a macro because O_PATH needs _GNU_SOURCE, which only shim.c
 *  defines; its value differs between architectures. See open(2). */
extern const int cas_o_path;

/** Opens an unnamed regular file in the directory dirfd (O_TMPFILE | O_RDWR),
 *  to be given a name later with cas_link_tmpfile. Returns the descriptor or
 *  -errno (-EOPNOTSUPP where the file system lacks O_TMPFILE). */
int cas_open_tmpfile(int dirfd, mode_t mode);

/** Gives the unnamed file fd (from cas_open_tmpfile) the name path in dirfd.
 *  Fails with -EEXIST if path exists. Returns 0 or -errno.
 *  The corresponding C function is linkat(2) with AT_EMPTY_PATH, falling back
 *  to /proc/self/fd when AT_EMPTY_PATH needs a capability the process lacks. */
int cas_link_tmpfile(int fd, int dirfd, const char *path);

/** Opens a new, independent read-only description of the file behind fd
 *  (through /proc/self/fd), with O_CLOEXEC. Unlike dup(2), the new descriptor
 *  has its own file offset and its own access mode. Returns it or -errno. */
int cas_reopen_readonly(int fd);

/** A new descriptor of the same open file description as fd (same file
 *  offset and status flags), with O_CLOEXEC. Returns it or -errno.
 *  The corresponding C function is fcntl(2) F_DUPFD_CLOEXEC. */
int cas_dup_cloexec(int fd);

/** Closes fd. Returns 0 or -errno. EINTR is not retried: on Linux the
 *  descriptor is released even when close reports EINTR. */
int cas_close(int fd);

/** The file type and size of fd: *mode receives st_mode, *size st_size,
 *  *inode st_ino, *device st_dev. Returns 0 or -errno. fstat(2). */
int cas_fstat(int fd, uint32_t *mode, int64_t *size, uint64_t *inode, uint64_t *device);

/** As cas_fstat for path relative to dirfd, not following a final symlink
 *  when nofollow is non-zero. fstatat(2). */
int cas_fstatat(int dirfd, const char *path, int nofollow,
                uint32_t *mode, int64_t *size, uint64_t *inode, uint64_t *device);

/** The owner of fd: *uid receives st_uid, *gid st_gid. Returns 0 or -errno.
 *  fstat(2). */
int cas_fstat_owner(int fd, uint32_t *uid, uint32_t *gid);

/* ---- Reading and writing ------------------------------------------------ */

/** Reads up to count bytes at offset, looping over short reads and EINTR
 *  until count bytes are read or end of file. Returns the number of bytes read
 *  (less than count only at end of file) or -errno. pread(2). */
ssize_t cas_pread_full(int fd, void *buffer, size_t count, int64_t offset);

/** Writes count bytes at offset, looping over short writes and EINTR.
 *  Returns count or -errno. pwrite(2). */
ssize_t cas_pwrite_full(int fd, const void *buffer, size_t count, int64_t offset);

/** Writes count bytes at the file position, looping over short writes and
 *  EINTR. Returns count or -errno. write(2). */
ssize_t cas_write_full(int fd, const void *buffer, size_t count);

/** Reads up to count bytes at the file position (one call). read(2). */
ssize_t cas_read(int fd, void *buffer, size_t count);

/** Moves the file position. Returns the new position or -errno. lseek(2). */
int64_t cas_lseek(int fd, int64_t offset, int whence);

/** Flushes fd's data and metadata to storage. fsync(2). */
int cas_fsync(int fd);

/** Truncates or extends fd to length. ftruncate(2). */
int cas_ftruncate(int fd, int64_t length);
/** Allocates the file's blocks in [offset, offset + count) without changing
 *  its length (fallocate with FALLOC_FL_KEEP_SIZE); -errno on failure.
 *  fallocate(2). */
int cas_allocate(int fd, int64_t offset, int64_t count);
/** Frees the file's blocks in [offset, offset + count), which then read as
 *  zeros, without changing its length (fallocate with FALLOC_FL_PUNCH_HOLE);
 *  -errno on failure. fallocate(2). */
int cas_punch_hole(int fd, int64_t offset, int64_t count);

/** Starts writeback of the dirty pages of fd in [offset, offset + count)
 *  without waiting for it (SYNC_FILE_RANGE_WRITE), so that a later fsync has
 *  less to wait for. It makes nothing durable by itself: metadata and the
 *  disk's cache are untouched. Returns 0 or -errno (-EINVAL for a bad range,
 *  -ESPIPE for a pipe). sync_file_range(2). */
int cas_start_writeback(int fd, int64_t offset, int64_t count);

/** Copies up to count bytes from in_fd at *in_off to out_fd at *out_off,
 *  advancing both offsets. Returns the number copied (0 at end of input) or
 *  -errno; -EXDEV/-ENOSYS/-EINVAL mean "copy by hand". copy_file_range(2). */
ssize_t cas_copy_file_range(int in_fd, int64_t *in_off, int out_fd, int64_t *out_off, size_t count);

/* ---- Names ---------------------------------------------------------------- */

/** Renames within or across directories. flags: 0, or CAS_RENAME_NOREPLACE to
 *  fail with -EEXIST instead of replacing, or CAS_RENAME_EXCHANGE to swap two
 *  existing names atomically. renameat2(2). */
int cas_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned flags);
#define CAS_RENAME_NOREPLACE 1u
#define CAS_RENAME_EXCHANGE 2u

/** Makes newpath (relative to the directory newdirfd) a hard link to oldpath
 *  (relative to olddirfd); AT_FDCWD for the working directory. A symlink at
 *  oldpath is linked itself, never followed. Returns 0 or -errno (-EEXIST if
 *  newpath exists). linkat(2) with no flags. */
int cas_linkat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath);

/** Removes a name; dir non-zero removes an empty directory. unlinkat(2). */
int cas_unlinkat(int dirfd, const char *path, int dir);

/** Creates a directory. Returns 0, or -EEXIST if something is there. mkdirat(2). */
int cas_mkdirat(int dirfd, const char *path, mode_t mode);

/* ---- Scheduling ----------------------------------------------------------- */

/** Moves the calling thread to nice 19 and the SCHED_BATCH policy (no
 *  wake-up preemption of other threads). Threads it creates from then on
 *  inherit both; an unprivileged thread cannot come back. Returns 0 (both),
 *  1 (nice 19 only) or -errno when nice 19 was refused.
 *  setpriority(2), sched_setscheduler(2). */
int cas_thread_enter_background(void);

/** 1 when the calling thread runs at nice 19 or at the idle class
 *  (SCHED_IDLE), else 0. */
int cas_thread_is_background(void);

/** The calling thread's scheduling policy (SCHED_OTHER 0, SCHED_IDLE 5…)
 *  and nice value. sched_getattr(2) (else sched_getscheduler(2) and
 *  getpriority(2)). */
void cas_thread_priority(int *policy, int *nice);

/** The calling thread's ID. gettid(2). */
int cas_gettid(void);

/** On a thread at background priority (cas_thread_is_background, known
 *  once per thread; cas_thread_enter_background marks it at once) that has
 *  run for interval_ns since it last gave way, gives its CPU to any thread
 *  waiting for it (sched_yield) and returns 1; otherwise returns 0 at once.
 *  For the loops of background work: the scheduler notices that a nice-19
 *  thread has had its share of a CPU it shares only at the next tick (4 ms
 *  at HZ=250), so without this a background thread that took a reader's
 *  CPU kept it that long. A thread alone on its CPU yields to nobody and
 *  goes on. Costs a thread-local load on other threads, and a clock read
 *  (vDSO) on background ones. sched_yield(2). */
int cas_give_way(uint64_t interval_ns);

/** Queues fn(context) for the process's background thread: one long-lived
 *  thread at nice 19 and SCHED_BATCH (cas_thread_enter_background), started
 *  on first use, that runs the jobs in order. Returns 0 when queued, or
 *  -errno when the thread or the job's node cannot be made — the caller
 *  then runs the job itself. A child made by fork starts a thread of its
 *  own on first use; jobs queued in the parent before the fork stay there. */
int cas_background_submit(void (*fn)(void *context), void *context);

/* ---- Memory mappings ------------------------------------------------------ */

/** Maps length bytes of fd from offset 0, shared and read-only. *address
 *  receives the mapping. Returns 0 or -errno. mmap(2). */
int cas_mmap_readonly(int fd, size_t length, void **address);

/** Maps length bytes of fd from offset 0, shared and writable (for filling
 *  a memory file before it is sealed). Returns 0 or -errno. mmap(2). */
int cas_mmap_writable(int fd, size_t length, void **address);

/** Unmaps a mapping made by cas_mmap_readonly or cas_mmap_writable. munmap(2). */
int cas_munmap(void *address, size_t length);

/** Advises the kernel about a range: CAS_ADVICE_WILLNEED, _SEQUENTIAL,
 *  _RANDOM, _DONTNEED. madvise(2). */
int cas_madvise(void *address, size_t length, int advice);
#define CAS_ADVICE_NORMAL 0
#define CAS_ADVICE_RANDOM 1
#define CAS_ADVICE_SEQUENTIAL 2
#define CAS_ADVICE_WILLNEED 3
#define CAS_ADVICE_DONTNEED 4

/** The system page size in bytes. */
size_t cas_page_size(void);

/* ---- Sealed memory files --------------------------------------------------- */

/** Creates an anonymous memory file that allows sealing, with close-on-exec.
 *  Returns its read-write descriptor or -errno. memfd_create(2). */
int cas_memfd_create(const char *name);

/** Seals fd against every change (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE
 *  | F_SEAL_SEAL). Fails with -EBUSY while a writable shared mapping exists.
 *  fcntl(2) F_ADD_SEALS. */
int cas_memfd_seal(int fd);

/** The seals on fd (F_SEAL_* bits). fcntl(2) F_GET_SEALS. */
int cas_memfd_seals(int fd);

/* ---- Open file description locks -------------------------------------------- */

/** Takes (or, with type CAS_LOCK_UNLOCK, releases) an open-file-description
 *  lock on the whole of fd. With wait non-zero, blocks until granted
 *  (F_OFD_SETLKW; EINTR is returned, not retried, so a signal can end the
 *  wait); otherwise fails at once with -EAGAIN when another description holds
 *  a conflicting lock (F_OFD_SETLK). fcntl(2). */
int cas_ofd_lock(int fd, int type, int wait);
#define CAS_LOCK_SHARED 0
#define CAS_LOCK_EXCLUSIVE 1
#define CAS_LOCK_UNLOCK 2

/** Whether some other description holds a lock conflicting with an exclusive
 *  lock on fd: 1 yes, 0 no, or -errno.
 *  fcntl(2) F_OFD_GETLK. */
int cas_ofd_probe(int fd);

/** Whether some other description holds a lock on fd that conflicts with a
 *  lock of type (CAS_LOCK_SHARED or CAS_LOCK_EXCLUSIVE): 1 yes, storing the
 *  l_pid F_OFD_GETLK reports in *pid, 0 no, or -errno. Linux reports the
 *  pid of a process-associated (F_SETLK) lock, 0 when that process is
 *  outside the caller's PID namespace, and -1 for an open file description
 *  lock, whoever holds it. fcntl(2) F_OFD_GETLK. */
int cas_ofd_conflict(int fd, int type, int32_t *pid);

/* ---- Permissions --------------------------------------------------------------- */

/** Sets fd's permission bits (07777) to (bits & ~clear) | set when that
 *  differs from what they are and the process's effective uid owns the
 *  file: 1 changed, 0 left as it was (already so, or another user's file),
 *  or -errno. clear 07777 sets the mode set; clear 0 adds the bits set.
 *  fstat(2), fchmod(2). */
int cas_fchmod_owned(int fd, uint32_t clear, uint32_t set);

/* ---- Unix sockets ------------------------------------------------------------ */

/** Sends count bytes of data on the connected socket sock, with the
 *  descriptor fd attached (SCM_RIGHTS) unless fd is -1. MSG_NOSIGNAL is set.
 *  Returns the number of bytes sent or -errno. sendmsg(2), unix(7). */
ssize_t cas_send_with_fd(int sock, const void *data, size_t count, int fd);

/** Receives up to capacity bytes from sock. A descriptor attached with
 *  SCM_RIGHTS is stored in *fd (with close-on-exec), else *fd is -1; extra or
 *  truncated control data is closed and reported as -EBADMSG. Returns the
 *  number of bytes received (0 at end of stream) or -errno. recvmsg(2). */
ssize_t cas_recv_with_fd(int sock, void *data, size_t capacity, int *fd);

/** The credentials of the process at the other end of a Unix socket, as they
 *  were when it connected. SO_PEERCRED, unix(7). */
int cas_peer_credentials(int sock, int32_t *pid, uint32_t *uid, uint32_t *gid);

/** Creates a Unix stream socket (close-on-exec) bound to path and listening
 *  with the given backlog. The socket file gets the given mode. Returns the
 *  descriptor or -errno (-ENAMETOOLONG when path exceeds sun_path). */
int cas_unix_listen(const char *path, mode_t mode, int backlog);

/** Checks that fd (one a service manager passed, as systemd's LISTEN_FDS)
 *  is a listening Unix stream socket, and makes it close-on-exec. Writes
 *  the path it is bound to, NUL-terminated ("" for an unnamed or abstract
 *  socket, cut to capacity), into path. Returns 0, or -ENOTSOCK (not a
 *  socket), -EAFNOSUPPORT (not AF_UNIX), -ESOCKTNOSUPPORT (not a stream
 *  socket), -EINVAL (not listening), -EBADF, or another -errno.
 *  getsockopt(2) SO_DOMAIN, SO_TYPE, SO_ACCEPTCONN; getsockname(2). */
int cas_unix_listener_check(int fd, char *path, size_t capacity);

/** Connects a new Unix stream socket (close-on-exec) to path. Returns the
 *  descriptor or -errno. */
int cas_unix_connect(const char *path);

/** Accepts a connection on a listening socket, with close-on-exec. accept4(2). */
int cas_accept(int sock);

/** Creates a connected pair of Unix stream sockets with close-on-exec.
 *  socketpair(2). */
int cas_socketpair(int fds[2]);

/** Sets the receive and send timeouts of sock, in milliseconds (0: none).
 *  SO_RCVTIMEO, SO_SNDTIMEO. */
int cas_socket_timeouts(int sock, int milliseconds);

/** Shuts down both directions of the connected socket sock: a thread
 *  blocked receiving on it returns 0 (end of stream), and the peer sees the
 *  connection end. The descriptor stays open. shutdown(2) with SHUT_RDWR. */
int cas_shutdown(int sock);

/** Waits until one of the count descriptors in fds is readable (or at end of
 *  stream, or in error), or until timeout_ms milliseconds pass (-1: no
 *  limit). Bit i of *ready is set when fds[i] is; count is at most 64.
 *  Returns the number of ready descriptors (0 on timeout) or -errno
 *  (-EINTR is returned, not retried). poll(2). */
int cas_poll_readable(const int *fds, int count, int timeout_ms, uint64_t *ready);

/** Changes the group of path (not following a final symlink), leaving the
 *  owner. Returns 0 or -errno. fchownat(2) with AT_SYMLINK_NOFOLLOW. */
int cas_chgrp(const char *path, uint32_t gid);

/* ---- HTTP server (AssetServer) ------------------------------------------------
 * TCP listening and accepting, epoll, sendfile and opening beneath a root
 * directory, for `assetpack serve`. Sockets made here are non-blocking. */

/** Creates a TCP socket (close-on-exec, non-blocking, SO_REUSEADDR) bound to
 *  the numeric IPv4 or IPv6 address (for example "127.0.0.1" or "::1") and
 *  port (0: the kernel picks a free one), listening with backlog. *bound_port
 *  receives the port it is bound to. Returns the descriptor or -errno
 *  (-EINVAL when address is not a numeric address, -EADDRINUSE when the port
 *  is taken). socket(2), bind(2), listen(2). */
int cas_tcp_listen(const char *address, int port, int backlog, int *bound_port);

/** Accepts a connection on the listening socket sock, non-blocking and
 *  close-on-exec, with TCP_NODELAY. The peer's address is written to remote
 *  (capacity bytes, NUL-terminated) as "1.2.3.4:port" or "[::1]:port".
 *  Returns the descriptor or -errno (-EAGAIN when none is waiting). accept4(2). */
int cas_tcp_accept(int sock, char *remote, size_t capacity);

/** Sends up to count bytes on the non-blocking socket sock, without SIGPIPE
 *  (MSG_NOSIGNAL); with more != 0, as MSG_MORE (more data follows at once:
 *  a response head and its body leave in one segment). Returns the number
 *  sent or -errno (-EAGAIN when the socket buffer is full). send(2). */
ssize_t cas_send(int sock, const void *data, size_t count, int more);

/** Shuts down the sending direction of sock: the peer reads end of stream
 *  once it has what was sent. shutdown(2) with SHUT_WR. */
int cas_shutdown_write(int sock);

/** Sends up to count bytes of the file in_fd from *offset to the socket
 *  out_fd, advancing *offset by the number sent. Returns it (0 at end of
 *  file) or -errno (-EAGAIN when the socket buffer is full). sendfile(2). */
ssize_t cas_sendfile(int out_fd, int in_fd, int64_t *offset, size_t count);

/** The epoll(7) event bits, as cas_epoll_ctl takes them and cas_epoll_wait
 *  reports them (the values are the kernel's). */
#define CAS_EVENT_IN 0x001u
#define CAS_EVENT_OUT 0x004u
#define CAS_EVENT_ERR 0x008u
#define CAS_EVENT_HUP 0x010u
#define CAS_EVENT_RDHUP 0x2000u

/** Creates an epoll instance with close-on-exec. epoll_create1(2). */
int cas_epoll_create(void);

/** Adds (op 0), changes (op 1) or removes (op 2) fd in the interest list of
 *  epfd, watching events (CAS_EVENT_* bits, level-triggered). epoll_ctl(2). */
int cas_epoll_ctl(int epfd, int op, int fd, uint32_t events);

/** Waits up to timeout_ms milliseconds (-1: no limit) for events on epfd.
 *  Up to capacity ready descriptors are written to fds and their events to
 *  events. Returns how many or -errno (-EINTR is returned, not retried).
 *  epoll_wait(2). */
int cas_epoll_wait(int epfd, int *fds, uint32_t *events, int capacity, int timeout_ms);

/** Creates a non-blocking, close-on-exec eventfd(2) with counter 0. */
int cas_eventfd(void);

/** Adds 1 to the eventfd fd's counter, waking whoever polls it. Safe from any
 *  thread. Returns 0 or -errno. write(2) on an eventfd. */
int cas_eventfd_signal(int fd);

/** Opens path (relative, no ".." component) beneath the directory dirfd,
 *  never leaving it: with openat2(2) and RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS
 *  when allow_openat2 is non-zero and the kernel has it (symlinks that stay
 *  beneath dirfd are followed, others fail with -EXDEV), else component by
 *  component with O_NOFOLLOW (every symlink fails with -ELOOP or -ENOTDIR).
 *  O_CLOEXEC is always added to flags. *used_openat2 receives 1 when openat2
 *  resolved the path, 0 otherwise. Returns the descriptor or -errno. */
int cas_open_beneath(int dirfd, const char *path, int flags, int allow_openat2, int *used_openat2);

/** As cas_fstat, with the modification time: *mtime_sec and *mtime_nsec
 *  receive st_mtim. fstat(2). */
int cas_fstat_mtime(int fd, uint32_t *mode, int64_t *size, uint64_t *inode,
                    int64_t *mtime_sec, int64_t *mtime_nsec);

/** Sets the modification time of the open file fd to sec seconds (and 0
 *  ns) since 1970 UTC, leaving the access time. Returns 0 or -errno.
 *  futimens(2). */
int cas_set_mtime(int fd, int64_t sec);

/** Sets the modification time of the open file fd to now (to the
 *  nanosecond the clock gives), leaving the access time. Returns 0 or
 *  -errno. futimens(2) with UTIME_NOW. */
int cas_touch_mtime(int fd);

/** Raises the soft limit on open descriptors (RLIMIT_NOFILE) to at least
 *  wanted, as far as the hard limit allows. Returns the soft limit now in
 *  force or -errno. setrlimit(2). */
int64_t cas_raise_descriptor_limit(int64_t wanted);

/* ---- end of HTTP server block ------------------------------------------------ */

#ifdef __cplusplus
}
#endif

#endif /* CASSETSHIM_H */
