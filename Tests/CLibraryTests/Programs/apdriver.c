/*
 * apdriver: one libassetpacks call per run, for the tests to check.
 *
 *   apdriver [-w] [-c] [-g] [-t SECONDS] CONTAINER COMMAND ARGS...
 *
 * -w opens read-write, -c also creates, -g takes CONTAINER as a group ID
 * (ap_open_group; "-" for the default group), -t sets the lock timeout
 * (ap_set_lock_timeout; strtod's reading, so "nan" and "inf" too). A pack argument "-" is NULL
 * (search every pack). Data goes to stdout; a failure prints one line
 *
 *   error=<code> name=<strerror> reason=<n> errno=<n> pack=<p> member=<m> path=<p>: <message>
 *
 * on stderr and exits 1. Commands:
 *   read PACK PATH            the bytes, via ap_read
 *   copy PACK PATH            the bytes, via ap_copy's size query and copy
 *   copy-into PACK PATH N     ap_copy into a buffer of N bytes
 *   stat PACK PATH            "pack path size stored_size method crc32"
 *   fd PACK PATH [standalone] the bytes read from the descriptor with pread;
 *                             "source offset length crc32 cloexec writable" on stderr
 *   packs                     "id version policy members total archive_size sha256"
 *   members PACK [DIR]        "path size stored_size method crc32"
 *   install FILE [ID]         "installed" / "replaced" / "unchanged"
 *   install-flags FLAGS FILE [ID]  the same through ap_install_flags (FLAGS a
 *                             number), then "nice N" and "policy P" of the
 *                             calling thread, before and after
 *   remove PACK
 *   verify [deep] [repair] [dry-run]   "code severity remaining pack object", exit status fsck's
 *   path                      ap_container_path
 *   mapped PACK PATH          the file whose mapping holds ap_read's bytes (from
 *                             /proc/self/maps), or "anonymous"
 */
#define _POSIX_C_SOURCE 200809L
#include <assetpacks.h>

#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static int failed(int rc) {
    const char *pack = ap_last_error_pack(), *member = ap_last_error_member(), *path = ap_last_error_path();
    fprintf(stderr, "error=%d name=%s reason=%d errno=%d pack=%s member=%s path=%s: %s\n", rc, ap_strerror(rc),
            ap_last_error_reason(), ap_last_error_errno(), pack ? pack : "(null)", member ? member : "(null)",
            path ? path : "(null)", ap_last_error_message());
    if (ap_last_error_code() != rc) {
        fprintf(stderr, "ap_last_error_code() is %d, not %d\n", ap_last_error_code(), rc);
        return 3;
    }
    return 1;
}

static const char *pack_arg(const char *s) { return strcmp(s, "-") == 0 ? NULL : s; }

static int write_all(const void *bytes, size_t size) {
    return fwrite(bytes, 1, size, stdout) == size ? 0 : 2;
}

static void on_finding(void *context, const ap_finding *f) {
    int *count = context;
    ++*count;
    printf("%s %d %d %s %s\n", f->code, f->severity, f->remaining, f->pack ? f->pack : "-", f->object ? f->object : "-");
}

static int run(ap_container *c, int argc, char **argv) {
    const char *command = argv[0];
    int rc;
    if (strcmp(command, "read") == 0 && argc == 3) {
        const void *bytes;
        size_t size;
        ap_data *held;
        if ((rc = ap_read(c, pack_arg(argv[1]), argv[2], &bytes, &size, &held)) != AP_OK) return failed(rc);
        rc = write_all(bytes, size);
        ap_release(held);
        return rc;
    }
    if (strcmp(command, "copy") == 0 && argc == 3) {
        size_t size = 0;
        if ((rc = ap_copy(c, pack_arg(argv[1]), argv[2], NULL, 0, &size)) != AP_OK) return failed(rc);
        char *buffer = malloc(size ? size : 1);
        size_t got = 0;
        if ((rc = ap_copy(c, pack_arg(argv[1]), argv[2], buffer, size, &got)) != AP_OK) { free(buffer); return failed(rc); }
        rc = got == size ? write_all(buffer, got) : 2;
        free(buffer);
        return rc;
    }
    if (strcmp(command, "copy-into") == 0 && argc == 4) {
        size_t capacity = strtoul(argv[3], NULL, 10), size = 0;
        char *buffer = malloc(capacity ? capacity : 1);
        rc = ap_copy(c, pack_arg(argv[1]), argv[2], buffer, capacity, &size);
        if (rc == AP_ERANGE) printf("needs %zu\n", size);
        if (rc == AP_OK) write_all(buffer, size);
        free(buffer);
        return rc == AP_OK ? 0 : failed(rc);
    }
    if (strcmp(command, "stat") == 0 && argc == 3) {
        ap_member_info info = {.struct_size = sizeof info};
        if ((rc = ap_stat(c, pack_arg(argv[1]), argv[2], &info)) != AP_OK) return failed(rc);
        printf("%s %s %" PRIu64 " %" PRIu64 " %d %08" PRIx32 "\n", info.pack, info.path, info.size, info.stored_size,
               info.method, info.crc32);
        return 0;
    }
    if (strcmp(command, "fd") == 0 && (argc == 3 || argc == 4)) {
        ap_descriptor_info d = {.struct_size = sizeof d};
        unsigned flags = argc == 4 && strcmp(argv[3], "standalone") == 0 ? AP_DESCRIPTOR_STANDALONE : 0;
        if ((rc = ap_get_descriptor(c, pack_arg(argv[1]), argv[2], flags, &d)) != AP_OK) return failed(rc);
        int fdflags = fcntl(d.fd, F_GETFD), flflags = fcntl(d.fd, F_GETFL);
        fprintf(stderr, "%d %" PRId64 " %" PRId64 " %08" PRIx32 " %d %d\n", d.source, d.offset, d.length, d.crc32,
                (fdflags & FD_CLOEXEC) != 0, (flflags & O_ACCMODE) != O_RDONLY);
        char *buffer = malloc(d.length ? (size_t)d.length : 1);
        int64_t done = 0;
        while (done < d.length) {
            ssize_t n = pread(d.fd, buffer + done, (size_t)(d.length - done), d.offset + done);
            if (n <= 0) break;
            done += n;
        }
        rc = done == d.length ? write_all(buffer, (size_t)done) : 2;
        free(buffer);
        close(d.fd);
        return rc;
    }
    if (strcmp(command, "packs") == 0 && argc == 1) {
        ap_packs *it;
        if ((rc = ap_packs_open(c, &it)) != AP_OK) return failed(rc);
        ap_pack_info p = {.struct_size = sizeof p};
        while ((rc = ap_packs_next(it, &p)) == 1)
            printf("%s %s %s %" PRIu64 " %" PRIu64 " %" PRIu64 " %s %d\n", p.id, p.version, p.download_policy, p.member_count,
                   p.total_size, p.archive_size, p.sha256, p.install_time > 1000000000);
        ap_packs_free(it);
        return rc == 0 ? 0 : failed(rc);
    }
    if (strcmp(command, "members") == 0 && (argc == 2 || argc == 3)) {
        ap_members *it;
        if ((rc = ap_members_open(c, argv[1], argc == 3 ? argv[2] : NULL, &it)) != AP_OK) return failed(rc);
        ap_member_info m = {.struct_size = sizeof m};
        while ((rc = ap_members_next(it, &m)) == 1)
            printf("%s %" PRIu64 " %" PRIu64 " %d %08" PRIx32 "\n", m.path, m.size, m.stored_size, m.method, m.crc32);
        ap_members_free(it);
        return rc == 0 ? 0 : failed(rc);
    }
    if (strcmp(command, "install") == 0 && (argc == 2 || argc == 3)) {
        int change = -1;
        if ((rc = ap_install(c, argv[1], argc == 3 ? argv[2] : NULL, &change)) != AP_OK) return failed(rc);
        printf("%s\n", change == AP_INSTALLED ? "installed" : change == AP_REPLACED ? "replaced" : change == AP_UNCHANGED ? "unchanged" : "?");
        return 0;
    }
    if (strcmp(command, "install-flags") == 0 && (argc == 3 || argc == 4)) {
        int change = -1;
        int nice_before = getpriority(PRIO_PROCESS, 0), policy_before = sched_getscheduler(0);
        rc = ap_install_flags(c, argv[2], argc == 4 ? argv[3] : NULL, (unsigned)strtoul(argv[1], NULL, 0), &change);
        if (rc != AP_OK) return failed(rc);
        printf("%s\n", change == AP_INSTALLED ? "installed" : change == AP_REPLACED ? "replaced" : change == AP_UNCHANGED ? "unchanged" : "?");
        printf("nice %d %d\npolicy %d %d\n", nice_before, getpriority(PRIO_PROCESS, 0), policy_before, sched_getscheduler(0));
        return 0;
    }
    if (strcmp(command, "remove") == 0 && argc == 2) {
        return (rc = ap_remove(c, argv[1])) == AP_OK ? 0 : failed(rc);
    }
    if (strcmp(command, "verify") == 0) {
        unsigned flags = 0;
        for (int i = 1; i < argc; i++) {
            if (strcmp(argv[i], "deep") == 0) flags |= AP_VERIFY_DEEP;
            else if (strcmp(argv[i], "repair") == 0) flags |= AP_VERIFY_REPAIR;
            else if (strcmp(argv[i], "dry-run") == 0) flags |= AP_VERIFY_DRY_RUN;
            else if (strcmp(argv[i], "bogus") == 0) flags |= 0x80;
        }
        int count = 0;
        rc = ap_verify(c, flags, on_finding, &count);
        if (rc < 0) return failed(rc);
        printf("status %d findings %d\n", rc, count);
        return rc;
    }
    if (strcmp(command, "mapped") == 0 && argc == 3) {
        const void *bytes;
        size_t size;
        ap_data *held;
        if ((rc = ap_read(c, pack_arg(argv[1]), argv[2], &bytes, &size, &held)) != AP_OK) return failed(rc);
        FILE *maps = fopen("/proc/self/maps", "r");
        char line[4096], found[4096] = "anonymous";
        uintptr_t at = (uintptr_t)bytes;
        while (maps && fgets(line, sizeof line, maps)) {
            uintptr_t lo, hi;
            int name = 0;
            if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %*s %*s %*s %*s %n", &lo, &hi, &name) >= 2 && lo <= at && at < hi) {
                if (name > 0 && line[name] == '/') snprintf(found, sizeof found, "%s", line + name);
                break;
            }
        }
        if (maps) fclose(maps);
        found[strcspn(found, "\n")] = 0;
        printf("%s\n", found);
        ap_release(held);
        return 0;
    }
    if (strcmp(command, "path") == 0 && argc == 1) {
        printf("%s\n", ap_container_path(c));
        return 0;
    }
    fprintf(stderr, "apdriver: bad command\n");
    return 64;
}

int main(int argc, char **argv) {
    unsigned flags = AP_OPEN_READONLY;
    int group = 0, i = 1;
    const char *timeout = NULL;
    for (; i < argc && argv[i][0] == '-' && argv[i][1] != 0; i++) {
        if (strcmp(argv[i], "-t") == 0 && i + 1 < argc) timeout = argv[++i];
        else if (strcmp(argv[i], "-w") == 0) flags |= AP_OPEN_READWRITE;
        else if (strcmp(argv[i], "-c") == 0) flags |= AP_OPEN_CREATE;
        else if (strcmp(argv[i], "-g") == 0) group = 1;
        else if (strcmp(argv[i], "-x") == 0) flags |= 0x40;
        else break;
    }
    if (argc - i < 2) {
        fprintf(stderr, "usage: apdriver [-w] [-c] [-g] [-t SECONDS] CONTAINER COMMAND ARGS...\n");
        return 64;
    }
    ap_container *c = NULL;
    int rc = group ? ap_open_group(pack_arg(argv[i]), flags, &c) : ap_open(argv[i], flags, &c);
    if (rc != AP_OK) return failed(rc);
    if (timeout && (rc = ap_set_lock_timeout(c, strtod(timeout, NULL))) != AP_OK) {
        ap_close(c);
        return failed(rc);
    }
    rc = run(c, argc - i - 1, argv + i + 1);
    ap_close(c);
    return rc;
}
