/* daemon-client: asks an AssetPacks descriptor daemon for one member and
 * copies its bytes to standard output (or a file), linked against
 * libassetpacks-client alone — what a sandboxed helper that may not open the
 * container itself does.
 *
 *   cc daemon-client.c $(pkg-config --cflags --libs assetpacks-client) -o daemon-client
 *   assetpack daemon --container /srv/game/container &
 *   ./daemon-client --container /srv/game/container --pack levels Levels/1.json
 *
 * Usage: daemon-client (--container DIR | --socket PATH) [--pack ID]
 *                      [--standalone] [--timeout MS] MEMBER [OUTPUT]
 * Without --container or --socket, $ASSETPACKS_CONTAINER names the container.
 * Exit status: 0 success, 1 failure (one line on stderr), 64 usage error. */
#define _POSIX_C_SOURCE 200809L
#include <assetpacks-client.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int usage(const char *why) {
    fprintf(stderr, "daemon-client: %s\n"
                    "usage: daemon-client (--container DIR | --socket PATH) [--pack ID] [--standalone] "
                    "[--timeout MS] MEMBER [OUTPUT]\n", why);
    return 64;
}

/* Writes all of buffer[0..<count] to fd. */
static int write_all(int fd, const char *buffer, size_t count) {
    while (count > 0) {
        ssize_t n = write(fd, buffer, count);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -1;
        buffer += n;
        count -= (size_t)n;
    }
    return 0;
}

/* Copies the member's bytes — length bytes at offset in the descriptor's
 * file — to out with pread, which leaves the file position alone (mmap of
 * the range works as well; stored members are page-aligned when large). */
static int copy_member(const apc_descriptor *d, int out, const char *output) {
    static char buffer[1 << 16];
    int64_t done = 0;
    while (done < d->length) {
        size_t want = d->length - done < (int64_t)sizeof buffer ? (size_t)(d->length - done) : sizeof buffer;
        ssize_t n = pread(d->fd, buffer, want, (off_t)(d->offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            fprintf(stderr, "daemon-client: read the member: %s\n", n == 0 ? "the file ends early" : strerror(errno));
            return 1;
        }
        if (write_all(out, buffer, (size_t)n) != 0) {
            fprintf(stderr, "daemon-client: write %s: %s\n", output, strerror(errno));
            return 1;
        }
        done += n;
    }
    return 0;
}

int main(int argc, char **argv) {
    const char *container = NULL, *socket_path = NULL, *pack = NULL, *member = NULL, *output = NULL;
    unsigned flags = 0;
    int timeout = APC_DEFAULT_TIMEOUT_MS;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int takes_value = !strcmp(a, "--container") || !strcmp(a, "--socket") || !strcmp(a, "--pack") || !strcmp(a, "--timeout");
        if (takes_value && i + 1 == argc) return usage("an option lacks its value");
        if (!strcmp(a, "--container")) container = argv[++i];
        else if (!strcmp(a, "--socket")) socket_path = argv[++i];
        else if (!strcmp(a, "--pack")) pack = argv[++i];
        else if (!strcmp(a, "--timeout")) {
            char *end;
            long t = strtol(argv[++i], &end, 10);
            if (*end != '\0' || t < 1 || t > 86400000) return usage("--timeout takes milliseconds, 1 or more");
            timeout = (int)t;
        } else if (!strcmp(a, "--standalone")) flags |= APC_STANDALONE;
        else if (a[0] == '-' && a[1] != '\0') return usage("unknown option");
        else if (!member) member = a;
        else if (!output) output = a;
        else return usage("too many arguments");
    }
    if (!member) return usage("no member path");
    if (container && socket_path) return usage("--container and --socket exclude each other");
    if (!container && !socket_path && !(container = getenv("ASSETPACKS_CONTAINER")))
        return usage("no --container, --socket or ASSETPACKS_CONTAINER");

    apc_client *client;
    int rc = apc_create(&client);
    if (rc != APC_OK) {
        fprintf(stderr, "daemon-client: %s\n", apc_strerror(rc));
        return 1;
    }
    apc_descriptor d = APC_DESCRIPTOR_INIT;
    rc = apc_set_timeout(client, timeout);
    if (rc == APC_OK) rc = socket_path ? apc_connect_socket(client, socket_path) : apc_connect_container(client, container);
    if (rc == APC_OK) rc = apc_request(client, pack, member, flags, &d);
    if (rc != APC_OK) {
        fprintf(stderr, "daemon-client: %s\n", apc_message(client));
        apc_close(client);
        return 1;
    }
    apc_close(client);   /* the descriptor is ours and outlives the handle */

    int out = STDOUT_FILENO;
    if (output && (out = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
        fprintf(stderr, "daemon-client: open %s: %s\n", output, strerror(errno));
        close(d.fd);
        return 1;
    }
    int status = copy_member(&d, out, output ? output : "standard output");
    close(d.fd);
    if (output && close(out) != 0 && status == 0) {
        fprintf(stderr, "daemon-client: close %s: %s\n", output, strerror(errno));
        status = 1;
    }
    return status;
}
