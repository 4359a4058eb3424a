/* client-check: the C test program of libassetpacks-client, driven by
 * Tests/assetpackTests/DaemonClientCTests.swift (which builds it with -Wall
 * -Wextra -Werror, and once more under AddressSanitizer).
 *
 *   client-check api
 *       the calls that fail before anything is sent, apc_strerror, apc_version
 *   client-check get TARGET [--pack ID] [--standalone] [--shared] [--timeout MS] [--interrupt] [--hex-path HEX | PATH]
 *       one request; prints key=value lines: rc, status, errno, reason, field (one
 *       line each), message; on success source, offset, length, size, and whether the
 *       bytes read with pread have the CRC-32 the daemon sent; leaked (descriptors
 *       open at the end that were not at the start)
 *   client-check cycles TARGET N PACK PATH... [--interrupt]
 *       N rounds of requests for each PATH (every other round standalone), a
 *       missing member each round, a new handle every 100 rounds; checks every
 *       member's CRC-32; prints requests and leaked
 *   client-check threads TARGET T N PACK PATH
 *       T threads with a handle each, N requests each for PATH; prints requests and leaked
 *   client-check batch TARGET [--pack ID] [--standalone] [--shared] PATH...
 *       one apc_request_batch; prints rc, then for each member a line
 *       member=RC,LENGTH,CRC_OK (LENGTH and CRC_OK 0 on failure), then leaked
 *   client-check shared TARGET PACK A B DEFLATED
 *       stored members A and B of PACK with APC_SHARED on one handle, A again
 *       without it, A on a second handle with it, a batch of A and B with it,
 *       and the deflated member twice with it; prints which pairs share a file
 *       position (one open description) and whether each was at its member's
 *       start when handed out, then leaked
 *   client-check fuzz SOCKET N SEED
 *       a server thread at SOCKET answers N requests with replies mutated from valid
 *       ones (bytes flipped, cut, grown; kept slots named; 0, 1 or 2 descriptors) and closes each
 *       connection; every answer must be a success with a consistent range or one
 *       of the codes, and no descriptor may stay open; prints requests, successes
 *       and leaked
 * --interrupt: a SIGALRM every millisecond throughout, with a handler installed
 * without SA_RESTART, so that waits in the library meet EINTR; prints signals.
 * TARGET is --container DIR or --socket PATH. Exit status 0 when every check held. */
#define _GNU_SOURCE
#include <assetpacks-client.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

static int failures = 0;

#define CHECK(condition) \
    do { if (!(condition)) { fprintf(stderr, "client-check:%d: check failed: %s\n", __LINE__, #condition); failures++; } } while (0)

/* Descriptors open in this process. */
static int open_descriptors(void) {
    DIR *d = opendir("/proc/self/fd");
    if (!d) { perror("opendir /proc/self/fd"); exit(2); }
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) if (e->d_name[0] != '.') n++;
    closedir(d);
    return n - 1;   /* not the directory's own */
}

static volatile sig_atomic_t signals = 0;

static void count_signal(int signal) { (void)signal; signals++; }

/* A SIGALRM every millisecond from now on, interrupting system calls (no SA_RESTART). */
static void interrupt_often(void) {
    struct sigaction a;
    memset(&a, 0, sizeof a);
    a.sa_handler = count_signal;
    sigemptyset(&a.sa_mask);
    a.sa_flags = 0;
    struct itimerval every = {.it_interval = {0, 1000}, .it_value = {0, 1000}};
    sigset_t alarm;   /* the parent may have left it blocked */
    sigemptyset(&alarm);
    sigaddset(&alarm, SIGALRM);
    if (sigaction(SIGALRM, &a, NULL) != 0 || sigprocmask(SIG_UNBLOCK, &alarm, NULL) != 0 ||
        setitimer(ITIMER_REAL, &every, NULL) != 0) { perror("interrupt_often"); exit(2); }
}

/* No more of them (before this program's own output, which they could cut short). */
static void stop_interrupts(void) {
    struct itimerval never;
    memset(&never, 0, sizeof never);
    setitimer(ITIMER_REAL, &never, NULL);
}

static uint32_t crc_table[256];

/* Called once, before any thread starts. */
static void make_crc_table(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
}

static uint32_t crc32_of(const unsigned char *p, size_t n) {
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) c = crc_table[(c ^ p[i]) & 0xff] ^ (c >> 8);
    return c ^ 0xffffffffu;
}

/* Whether the member's bytes, read with pread, have the CRC-32 the daemon sent. */
static int bytes_match(const apc_descriptor *d) {
    unsigned char *buffer = malloc(d->length ? (size_t)d->length : 1);
    if (!buffer) return 0;
    int64_t done = 0;
    while (done < d->length) {
        ssize_t n = pread(d->fd, buffer + done, (size_t)(d->length - done), (off_t)(d->offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += n;
    }
    int ok = done == d->length && crc32_of(buffer, (size_t)d->length) == d->crc32;
    free(buffer);
    return ok;
}

static int connect_target(apc_client *c, const char *kind, const char *where) {
    return !strcmp(kind, "--socket") ? apc_connect_socket(c, where) : apc_connect_container(c, where);
}

static int api(void) {
    int major = -1, minor = -1, patch = -1;
    CHECK(strcmp(apc_version(&major, &minor, &patch), APC_VERSION_STRING) == 0);
    CHECK(major == APC_VERSION_MAJOR && minor == APC_VERSION_MINOR && patch == APC_VERSION_PATCH);
    CHECK(apc_version(NULL, NULL, NULL) != NULL);
    static const int codes[] = {APC_OK, APC_ENOPACK, APC_ENOFILE, APC_EAMBIGUOUS,
        APC_EPACKID, APC_EPATH, APC_ECORRUPT, APC_EARCHIVEMISSING, APC_EBADARCHIVE, APC_ESYSTEM,
        APC_EINDEX, APC_EDAEMON, APC_ELIMIT, APC_EPEER, APC_EREQUEST,
        APC_EREQUESTTOOLARGE, APC_EPROTOCOL, APC_EBUSY, APC_EDAEMONFAILED, APC_ENOTPERMITTED, APC_EINVAL};
    const size_t count = sizeof codes / sizeof codes[0];
    for (size_t i = 0; i < count; i++) {
        CHECK(strcmp(apc_strerror(codes[i]), "unknown error code") != 0);
        for (size_t k = 0; k < i; k++) CHECK(strcmp(apc_strerror(codes[i]), apc_strerror(codes[k])) != 0);
    }
    CHECK(strcmp(apc_strerror(-12345), "unknown error code") == 0);
    CHECK(strcmp(apc_strerror(7), "unknown error code") == 0);

    CHECK(apc_create(NULL) == APC_EINVAL);
    apc_client *c = NULL;
    CHECK(apc_create(&c) == APC_OK && c != NULL);
    apc_descriptor d = APC_DESCRIPTOR_INIT;
    CHECK(d.struct_size == sizeof d && d.fd == -1);
    /* Never connected. */
    CHECK(apc_request(c, NULL, "a", 0, &d) == APC_EINVAL && d.fd == -1);
    CHECK(strstr(apc_message(c), "not connected") != NULL);
    CHECK(apc_set_timeout(c, 0) == APC_EINVAL);
    CHECK(strstr(apc_message(c), "a timeout of 0 ms") != NULL);
    CHECK(apc_set_timeout(c, -2) == APC_EINVAL);
    CHECK(apc_set_timeout(c, APC_NO_TIMEOUT) == APC_OK && apc_message(c)[0] == '\0');
    CHECK(apc_set_timeout(c, 1) == APC_OK);
    CHECK(apc_set_timeout(NULL, 1) == APC_EINVAL);
    CHECK(apc_connect_socket(c, NULL) == APC_EINVAL);
    CHECK(apc_connect_container(c, NULL) == APC_EINVAL);
    CHECK(apc_connect_socket(NULL, "/x") == APC_EINVAL);
    CHECK(apc_request(NULL, NULL, "a", 0, &d) == APC_EINVAL);
    /* A failed connect still names the socket, so requests may follow (and fail the same way). */
    CHECK(apc_connect_socket(c, "/nonexistent/daemon.sock") == APC_EDAEMON);
    CHECK(apc_error_number(c) == ENOENT);
    CHECK(apc_request(c, NULL, NULL, 0, &d) == APC_EINVAL);
    CHECK(apc_request(c, NULL, "a", 0, NULL) == APC_EINVAL);
    CHECK(apc_request(c, NULL, "a", 4, &d) == APC_EINVAL);
    CHECK(strstr(apc_message(c), "unknown flags 0x4") != NULL);
    CHECK(apc_request(c, NULL, "a", APC_SHARED | 8, &d) == APC_EINVAL);
    CHECK(strstr(apc_message(c), "unknown flags 0x8") != NULL);
    apc_descriptor small = APC_DESCRIPTOR_INIT;
    small.struct_size = sizeof(size_t) + sizeof(int);
    CHECK(apc_request(c, NULL, "a", 0, &small) == APC_EINVAL);
    CHECK(strstr(apc_message(c), "struct_size") != NULL);
    /* Longer than the daemon reads: refused before sending. */
    char *huge = malloc(8194);
    memset(huge, 'a', 8193);
    huge[8193] = 0;
    CHECK(apc_request(c, NULL, huge, 0, &d) == APC_EREQUESTTOOLARGE);
    CHECK(apc_request(c, "p", huge + 1, 0, &d) == APC_EREQUESTTOOLARGE);
    CHECK(strstr(apc_message(c), "longer than the 8192 bytes") != NULL);
    CHECK(apc_error_status(c) == 0 && apc_error_field_count(c) == 0 && apc_error_field(c, 0) == NULL);
    /* Batches refused before anything is sent. */
    const char *paths[APC_MAX_BATCH + 1];
    apc_descriptor many[APC_MAX_BATCH + 1];
    int results[APC_MAX_BATCH + 1];
    for (int i = 0; i <= APC_MAX_BATCH; i++) {
        paths[i] = "a";
        many[i] = (apc_descriptor)APC_DESCRIPTOR_INIT;
    }
    CHECK(apc_request_batch(c, NULL, paths, 0, 0, many, results) == APC_EINVAL);
    CHECK(strstr(apc_message(c), "a batch of 0 members (1 to 64)") != NULL);
    CHECK(apc_request_batch(c, NULL, paths, APC_MAX_BATCH + 1, 0, many, results) == APC_EINVAL);
    CHECK(strstr(apc_message(c), "a batch of 65 members (1 to 64)") != NULL);
    CHECK(apc_request_batch(c, NULL, NULL, 1, 0, many, results) == APC_EINVAL);
    CHECK(apc_request_batch(c, NULL, paths, 1, 0, many, NULL) == APC_EINVAL);
    CHECK(apc_request_batch(NULL, NULL, paths, 1, 0, many, results) == APC_EINVAL);
    CHECK(apc_request_batch(c, NULL, paths, 2, 4, many, results) == APC_EINVAL);
    CHECK(strstr(apc_message(c), "unknown flags 0x4") != NULL);
    many[1].struct_size = sizeof(size_t) + sizeof(int);
    CHECK(apc_request_batch(c, NULL, paths, 2, 0, many, results) == APC_EINVAL);
    CHECK(strstr(apc_message(c), "struct_size") != NULL);
    many[1] = (apc_descriptor)APC_DESCRIPTOR_INIT;
    const char *long_paths[2] = {huge + 4000, huge + 4000};   /* 4193 bytes each: one is fine, two are not */
    CHECK(apc_request_batch(c, NULL, long_paths, 2, 0, many, results) == APC_EREQUESTTOOLARGE);
    CHECK(strstr(apc_message(c), "a batch of 2 members is longer than the 8192 bytes") != NULL);
    free(huge);
    /* A request on it tries to connect, and fails as the connect did. */
    CHECK(apc_request(c, "p", "a", 0, &d) == APC_EDAEMON && apc_error_number(c) == ENOENT);
    CHECK(strcmp(apc_message(c), "descriptor daemon at /nonexistent/daemon.sock is unavailable: connect: No such file or directory") == 0);
    CHECK(apc_error_field(c, -1) == NULL && apc_error_field(NULL, 0) == NULL && apc_error_field_count(NULL) == 0);
    CHECK(apc_message(NULL) != NULL);
    apc_close(c);
    apc_close(NULL);
    printf("api checks=%zu failures=%d\n", count, failures);
    return failures ? 1 : 0;
}

static int hex_value(char h) {
    return h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
}

static int get(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: client-check get TARGET [options] PATH\n"); return 64; }
    const char *pack = NULL, *path = NULL;
    char decoded[4096];
    unsigned flags = 0;
    int timeout = APC_DEFAULT_TIMEOUT_MS;
    for (int i = 4; i < argc; i++) {
        if (!strcmp(argv[i], "--pack") && i + 1 < argc) pack = argv[++i];
        else if (!strcmp(argv[i], "--standalone")) flags |= APC_STANDALONE;
        else if (!strcmp(argv[i], "--shared")) flags |= APC_SHARED;
        else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) timeout = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--interrupt")) interrupt_often();
        else if (!strcmp(argv[i], "--hex-path") && i + 1 < argc) {
            const char *h = argv[++i];
            size_t n = strlen(h) / 2;
            if (n >= sizeof decoded) return 64;
            for (size_t k = 0; k < n; k++) decoded[k] = (char)(hex_value(h[2 * k]) << 4 | hex_value(h[2 * k + 1]));
            decoded[n] = 0;
            path = decoded;
        } else path = argv[i];
    }
    if (!path) { fprintf(stderr, "client-check get: no path\n"); return 64; }
    int before = open_descriptors();
    apc_client *c;
    if (apc_create(&c) != APC_OK) return 2;
    CHECK(apc_set_timeout(c, timeout) == APC_OK);
    apc_descriptor d = APC_DESCRIPTOR_INIT;
    int rc = connect_target(c, argv[2], argv[3]);
    if (rc == APC_OK) rc = apc_request(c, pack, path, flags, &d);
    stop_interrupts();
    printf("rc=%d\nstatus=%d\nerrno=%d\nreason=%d\n", rc, apc_error_status(c), apc_error_number(c), apc_error_reason(c));
    for (int i = 0; i < apc_error_field_count(c); i++) printf("field=%s\n", apc_error_field(c, i));
    printf("message=%s\n", apc_message(c));
    if (rc == APC_OK) {
        int fl = fcntl(d.fd, F_GETFL), fdflags = fcntl(d.fd, F_GETFD);
        printf("source=%d\noffset=%lld\nlength=%lld\nsize=%lld\n", d.source, (long long)d.offset, (long long)d.length,
               (long long)d.file_size);
        printf("crc_ok=%d\nreadonly=%d\ncloexec=%d\n", bytes_match(&d), (fl & O_ACCMODE) == O_RDONLY, (fdflags & FD_CLOEXEC) != 0);
        CHECK(d.offset + d.length <= d.file_size);
        close(d.fd);
    } else {
        CHECK(d.fd == -1 && apc_message(c)[0] != '\0');
    }
    apc_close(c);
    printf("signals=%d\nleaked=%d\n", (int)signals, open_descriptors() - before);
    return failures ? 1 : 0;
}

static int batch(int argc, char **argv) {
    if (argc < 5) { fprintf(stderr, "usage: client-check batch TARGET [options] PATH...\n"); return 64; }
    const char *pack = NULL, *paths[APC_MAX_BATCH];
    size_t count = 0;
    unsigned flags = 0;
    for (int i = 4; i < argc; i++) {
        if (!strcmp(argv[i], "--pack") && i + 1 < argc) pack = argv[++i];
        else if (!strcmp(argv[i], "--standalone")) flags |= APC_STANDALONE;
        else if (!strcmp(argv[i], "--shared")) flags |= APC_SHARED;
        else if (count < APC_MAX_BATCH) paths[count++] = argv[i];
        else return 64;
    }
    int before = open_descriptors();
    apc_client *c;
    if (apc_create(&c) != APC_OK) return 2;
    apc_descriptor d[APC_MAX_BATCH];
    int results[APC_MAX_BATCH];
    for (size_t i = 0; i < count; i++) d[i] = (apc_descriptor)APC_DESCRIPTOR_INIT;
    int rc = connect_target(c, argv[2], argv[3]);
    if (rc == APC_OK) rc = apc_request_batch(c, pack, paths, count, flags, d, results);
    printf("rc=%d\n", rc);
    for (size_t i = 0; rc == APC_OK && i < count; i++) {
        int ok = results[i] == APC_OK;
        CHECK(ok == (d[i].fd >= 0));
        printf("member=%d,%lld,%d\n", results[i], ok ? (long long)d[i].length : 0LL, ok ? bytes_match(&d[i]) : 0);
        if (ok) close(d[i].fd);
    }
    apc_close(c);
    printf("leaked=%d\n", open_descriptors() - before);
    return failures ? 1 : 0;
}

/* Whether moving a's file position moves b's: one open description. */
static int share_a_position(const apc_descriptor *a, const apc_descriptor *b) {
    off_t before = lseek(b->fd, 0, SEEK_CUR);
    int shared = lseek(a->fd, before + 7, SEEK_SET) == before + 7 && lseek(b->fd, 0, SEEK_CUR) == before + 7;
    lseek(a->fd, before, SEEK_SET);
    return shared;
}

static int shared(int argc, char **argv) {
    if (argc != 8) { fprintf(stderr, "usage: client-check shared TARGET PACK A B DEFLATED\n"); return 64; }
    const char *pack = argv[4], *a = argv[5], *b = argv[6], *deflated = argv[7];
    int before = open_descriptors();
    apc_client *one, *two;
    if (apc_create(&one) != APC_OK || apc_create(&two) != APC_OK) return 2;
    CHECK(connect_target(one, argv[2], argv[3]) == APC_OK && connect_target(two, argv[2], argv[3]) == APC_OK);
    enum { A, B, A_OWN, A_OTHER, T1, T2, COUNT };
    apc_descriptor d[COUNT], batch[2] = {APC_DESCRIPTOR_INIT, APC_DESCRIPTOR_INIT};
    for (int i = 0; i < COUNT; i++) d[i] = (apc_descriptor)APC_DESCRIPTOR_INIT;
    CHECK(apc_request(one, pack, a, APC_SHARED, &d[A]) == APC_OK);
    int a_at_start = lseek(d[A].fd, 0, SEEK_CUR) == d[A].offset;
    CHECK(apc_request(one, pack, b, APC_SHARED, &d[B]) == APC_OK);
    int b_at_start = lseek(d[B].fd, 0, SEEK_CUR) == d[B].offset;
    CHECK(apc_request(one, pack, a, 0, &d[A_OWN]) == APC_OK);
    CHECK(apc_request(two, pack, a, APC_SHARED, &d[A_OTHER]) == APC_OK);
    CHECK(apc_request(one, pack, deflated, APC_SHARED, &d[T1]) == APC_OK);
    CHECK(apc_request(one, pack, deflated, APC_SHARED, &d[T2]) == APC_OK);
    const char *both[2] = {a, b};
    int results[2] = {-1, -1};
    CHECK(apc_request_batch(one, pack, both, 2, APC_SHARED, batch, results) == APC_OK && results[0] == APC_OK && results[1] == APC_OK);
    for (int i = 0; i < COUNT; i++) CHECK(d[i].fd >= 0 && bytes_match(&d[i]));
    CHECK(d[A].source == APC_SOURCE_ARCHIVE && d[T1].source == APC_SOURCE_MEMORY);
    printf("a_at_start=%d\nb_at_start=%d\n", a_at_start, b_at_start);
    printf("a_b=%d\na_own=%d\na_other_handle=%d\nmemory=%d\nbatch=%d\n", share_a_position(&d[A], &d[B]),
           share_a_position(&d[A], &d[A_OWN]) || share_a_position(&d[A_OWN], &d[A]),
           share_a_position(&d[A], &d[A_OTHER]) || share_a_position(&d[A_OTHER], &d[A]),
           share_a_position(&d[T1], &d[T2]), share_a_position(&batch[0], &d[A]) && share_a_position(&batch[1], &d[B]));
    for (int i = 0; i < COUNT; i++) if (d[i].fd >= 0) close(d[i].fd);
    for (int i = 0; i < 2; i++) if (batch[i].fd >= 0) close(batch[i].fd);
    apc_close(one);
    apc_close(two);
    printf("leaked=%d\n", open_descriptors() - before);
    return failures ? 1 : 0;
}

static int cycles(int argc, char **argv) {
    if (argc < 7) { fprintf(stderr, "usage: client-check cycles TARGET N PACK PATH...\n"); return 64; }
    long rounds = strtol(argv[4], NULL, 10);
    const char *pack = argv[5];
    if (!strcmp(argv[argc - 1], "--interrupt")) {
        interrupt_often();
        argc--;
    }
    int before = open_descriptors();
    long requests = 0;
    apc_client *c = NULL;
    for (long round = 0; round < rounds && failures == 0; round++) {
        if (round % 100 == 0) {
            apc_close(c);
            if (apc_create(&c) != APC_OK) return 2;
            int rc = connect_target(c, argv[2], argv[3]);
            if (rc != APC_OK) { fprintf(stderr, "client-check: %s\n", apc_message(c)); return 1; }
        }
        for (int i = 6; i < argc; i++) {
            apc_descriptor d = APC_DESCRIPTOR_INIT;
            unsigned flags = round % 2 ? APC_STANDALONE : 0;
            int rc = apc_request(c, pack, argv[i], flags, &d);
            requests++;
            if (rc != APC_OK) { fprintf(stderr, "client-check: %s: %s\n", argv[i], apc_message(c)); failures++; break; }
            CHECK(bytes_match(&d));
            CHECK(!flags || (d.source == APC_SOURCE_MEMORY && d.offset == 0 && d.length == d.file_size));
            close(d.fd);
        }
        apc_descriptor missing = APC_DESCRIPTOR_INIT;
        CHECK(apc_request(c, pack, "no/such/member", 0, &missing) == APC_ENOFILE && missing.fd == -1);
        CHECK(apc_error_field_count(c) == 2 && !strcmp(apc_error_field(c, 0), "no/such/member") && !strcmp(apc_error_field(c, 1), pack));
        requests++;
    }
    apc_close(c);
    stop_interrupts();
    int leaked = open_descriptors() - before;
    printf("requests=%ld\nleaked=%d\nfailures=%d\n", requests, leaked, failures);
    if (signals) printf("signals=%d\n", (int)signals);
    return failures || leaked ? 1 : 0;
}

struct thread_work {
    const char *kind, *where, *pack, *path;
    long requests;
    int failures;
};

static void *thread_requests(void *argument) {
    struct thread_work *w = argument;
    apc_client *c;
    if (apc_create(&c) != APC_OK || connect_target(c, w->kind, w->where) != APC_OK) { w->failures++; apc_close(c); return NULL; }
    for (long i = 0; i < w->requests; i++) {
        apc_descriptor d = APC_DESCRIPTOR_INIT;
        if (apc_request(c, w->pack, w->path, i % 2 ? APC_STANDALONE : 0, &d) != APC_OK || !bytes_match(&d)) w->failures++;
        if (d.fd >= 0) close(d.fd);
    }
    apc_close(c);
    return NULL;
}

static int threads(int argc, char **argv) {
    if (argc != 8) { fprintf(stderr, "usage: client-check threads TARGET T N PACK PATH\n"); return 64; }
    int count = atoi(argv[4]);
    if (count < 1 || count > 64) return 64;
    struct thread_work work[64];
    pthread_t ids[64];
    int before = open_descriptors();
    for (int i = 0; i < count; i++) {
        work[i] = (struct thread_work){argv[2], argv[3], argv[6], argv[7], strtol(argv[5], NULL, 10), 0};
        if (pthread_create(&ids[i], NULL, thread_requests, &work[i]) != 0) return 2;
    }
    long requests = 0;
    for (int i = 0; i < count; i++) {
        pthread_join(ids[i], NULL);
        requests += work[i].requests;
        failures += work[i].failures;
    }
    int leaked = open_descriptors() - before;
    printf("requests=%ld\nleaked=%d\nfailures=%d\n", requests, leaked, failures);
    return failures || leaked ? 1 : 0;
}

/* MARK: fuzz */

struct fuzz_server {
    int listener, file;
    uint64_t state;
};

static uint32_t next_random(struct fuzz_server *f) {
    f->state ^= f->state << 13;
    f->state ^= f->state >> 7;
    f->state ^= f->state << 17;
    return (uint32_t)(f->state >> 16);
}

static void put_le(unsigned char *p, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* A valid reply — a success, or a failure of some status with fields — then mutated. */
static size_t fuzz_reply(struct fuzz_server *f, unsigned char *out, size_t room) {
    static const int statuses[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 24, 64, 65, 66, 67, 68, 69, 70, 16, 200};
    size_t n;
    int success = next_random(f) % 3 == 0;
    memcpy(out, "APDR", 4);
    put_le(out + 4, 1, 2);
    put_le(out + 12, 0, 4);
    if (success) {
        put_le(out + 6, 0, 2);
        put_le(out + 8, 32, 4);
        put_le(out + 16, next_random(f) % 64, 8);
        put_le(out + 24, next_random(f) % 64, 8);
        put_le(out + 32, 100, 8);
        /* The source; now and then a kept slot (0-5) and the reuse byte. */
        put_le(out + 40, next_random(f) % 2, 4);
        if (next_random(f) % 4 == 0) {
            out[41] = (unsigned char)(next_random(f) % 6);
            out[42] = (unsigned char)(next_random(f) % 2);
        }
        put_le(out + 44, next_random(f), 4);
        n = 48;
    } else {
        int status = statuses[next_random(f) % (sizeof statuses / sizeof statuses[0])];
        put_le(out + 6, (uint64_t)status, 2);
        put_le(out + 16, next_random(f) % 3 ? 0 : next_random(f), 8);
        int fields = 1 + (int)(next_random(f) % 5);
        put_le(out + 24, (uint64_t)fields, 2);
        n = 26;
        for (int i = 0; i < fields; i++) {
            const char *text = i == 1 && next_random(f) % 2 ? "102" : i % 2 ? "stress" : "some/path";
            size_t l = strlen(text);
            put_le(out + n, l, 2);
            memcpy(out + n + 2, text, l);
            n += 2 + l;
        }
        put_le(out + 8, n - 16, 4);
    }
    /* Mutations: flip bytes, cut, grow. */
    int flips = (int)(next_random(f) % 4);
    for (int i = 0; i < flips; i++) out[next_random(f) % n] ^= (unsigned char)(1u << (next_random(f) % 8));
    switch (next_random(f) % 6) {
    case 0: n = next_random(f) % n; break;
    case 1: {
        size_t more = next_random(f) % 40;
        if (n + more > room) more = room - n;
        for (size_t i = 0; i < more; i++) out[n + i] = (unsigned char)next_random(f);
        n += more;
        break;
    }
    default: break;
    }
    return n;
}

static void fuzz_send(int sock, const unsigned char *bytes, size_t n, int fds, int file) {
    union { struct cmsghdr align; char bytes[CMSG_SPACE(2 * sizeof(int))]; } control;
    struct iovec iov = {.iov_base = (void *)bytes, .iov_len = n};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fds > 0 && n > 0) {
        int list[2] = {file, file};
        m.msg_control = control.bytes;
        m.msg_controllen = CMSG_SPACE((size_t)fds * sizeof(int));
        struct cmsghdr *h = CMSG_FIRSTHDR(&m);
        h->cmsg_level = SOL_SOCKET;
        h->cmsg_type = SCM_RIGHTS;
        h->cmsg_len = CMSG_LEN((size_t)fds * sizeof(int));
        memcpy(CMSG_DATA(h), list, (size_t)fds * sizeof(int));
    }
    if (n > 0) (void)sendmsg(sock, &m, MSG_NOSIGNAL);
}

static void *fuzz_serve(void *argument) {
    struct fuzz_server *f = argument;
    unsigned char request[16 + 8192], reply[1024];
    for (;;) {
        int sock = accept4(f->listener, NULL, NULL, SOCK_CLOEXEC);
        if (sock < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            return NULL;   /* shut down */
        }
        /* The request: its header, then its body. */
        size_t got = 0, want = 16;
        while (got < want) {
            ssize_t r = recv(sock, request + got, want - got, 0);
            if (r <= 0) break;
            got += (size_t)r;
            if (got == 16) want = 16 + (size_t)(request[8] | request[9] << 8);
        }
        if (got == want) {
            size_t n = fuzz_reply(f, reply, sizeof reply);
            int fds = (int)(next_random(f) % 8);
            fuzz_send(sock, reply, n, fds < 5 ? 1 : fds == 7 ? 2 : 0, f->file);
        }
        close(sock);
    }
}

static int fuzz(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: client-check fuzz SOCKET N SEED\n"); return 64; }
    long rounds = strtol(argv[3], NULL, 10);
    struct fuzz_server f = {.state = strtoull(argv[4], NULL, 10) | 1};
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (strlen(argv[2]) >= sizeof address.sun_path) return 64;
    strcpy(address.sun_path, argv[2]);
    f.file = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    f.listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (f.file < 0 || f.listener < 0 || bind(f.listener, (struct sockaddr *)&address, sizeof address) != 0 ||
        listen(f.listener, 16) != 0) { perror("fuzz server"); return 2; }
    int before = open_descriptors();
    pthread_t server;
    if (pthread_create(&server, NULL, fuzz_serve, &f) != 0) return 2;
    apc_client *c;
    if (apc_create(&c) != APC_OK || apc_set_timeout(c, 10000) != APC_OK) return 2;
    CHECK(apc_connect_socket(c, argv[2]) == APC_OK);
    long successes = 0;
    for (long i = 0; i < rounds && failures == 0; i++) {
        apc_descriptor d = APC_DESCRIPTOR_INIT;
        /* Every other request with APC_SHARED, so with FLAG_KEEP: slots are read. */
        int rc = apc_request(c, "stress", "some/path", i % 2 ? APC_SHARED : 0, &d);
        if (rc == APC_OK) {
            successes++;
            CHECK(d.fd >= 0 && d.offset >= 0 && d.length >= 0 && d.offset + d.length <= d.file_size && d.source <= 1);
            close(d.fd);
        } else {
            int known = (rc <= -1 && rc >= -10) || rc == -23 || rc == -24 || (rc <= -64 && rc >= -69);
            CHECK(known && d.fd == -1 && apc_message(c)[0] != '\0');
            CHECK(rc != APC_EDAEMON || apc_error_number(c) != 0);
            for (int k = 0; k < apc_error_field_count(c); k++) CHECK(apc_error_field(c, k) != NULL);
            if (failures) fprintf(stderr, "client-check: round %ld: %d %s\n", i, rc, apc_message(c));
        }
    }
    apc_close(c);
    shutdown(f.listener, SHUT_RDWR);
    pthread_join(server, NULL);
    int leaked = open_descriptors() - before;
    close(f.listener);
    close(f.file);
    unlink(argv[2]);
    printf("requests=%ld\nsuccesses=%ld\nleaked=%d\nfailures=%d\n", rounds, successes, leaked, failures);
    return failures || leaked ? 1 : 0;
}

int main(int argc, char **argv) {
    make_crc_table();
    if (argc >= 2 && !strcmp(argv[1], "api")) return api();
    if (argc >= 2 && !strcmp(argv[1], "get")) return get(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "cycles")) return cycles(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "batch")) return batch(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "shared")) return shared(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "threads")) return threads(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "fuzz")) return fuzz(argc, argv);
    fprintf(stderr, "usage: client-check api | get TARGET ... | cycles TARGET N PACK PATH... | threads ... | fuzz ...\n");
    return 64;
}
