/*
 * list-and-read: the C API in one page.
 *
 *   list-and-read CONTAINER              lists every pack and its members
 *   list-and-read CONTAINER PATH [PACK]  writes one member's bytes to stdout
 *
 * Build: make (see Makefile), or
 *   cc -Wall -Wextra -o list-and-read list-and-read.c $(pkg-config --cflags --libs assetpacks)
 */
#include <assetpacks.h>

#include <inttypes.h>
#include <stdio.h>

static int fail(int rc) {
    fprintf(stderr, "list-and-read: %s (%s)\n", ap_last_error_message(), ap_strerror(rc));
    return 1;
}

static int list(ap_container *c) {
    ap_packs *packs;
    int rc = ap_packs_open(c, &packs);
    if (rc != AP_OK) return fail(rc);
    ap_pack_info pack = {.struct_size = sizeof pack};
    while ((rc = ap_packs_next(packs, &pack)) == 1) {
        printf("%s (version %s, %" PRIu64 " members)\n", pack.id, pack.version, pack.member_count);
        ap_members *members;
        if ((rc = ap_members_open(c, pack.id, NULL, &members)) != AP_OK) break;
        ap_member_info member = {.struct_size = sizeof member};
        while ((rc = ap_members_next(members, &member)) == 1)
            printf("  %s\t%" PRIu64 " bytes\t%s\n", member.path, member.size,
                   member.method == AP_METHOD_DEFLATED ? "deflated" : "stored");
        ap_members_free(members);
        if (rc < 0) break;
    }
    ap_packs_free(packs);
    return rc < 0 ? fail(rc) : 0;
}

static int cat(ap_container *c, const char *path, const char *pack) {
    const void *bytes;
    size_t size;
    ap_data *held;
    int rc = ap_read(c, pack, path, &bytes, &size, &held);
    if (rc != AP_OK) return fail(rc);
    /* The bytes point into the installed archive: no copy was made. */
    size_t written = fwrite(bytes, 1, size, stdout);
    ap_release(held);
    return written == size ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: list-and-read CONTAINER [PATH [PACK]]\n");
        return 64;
    }
    ap_container *c;
    int rc = ap_open(argv[1], AP_OPEN_READONLY, &c);
    if (rc != AP_OK) return fail(rc);
    rc = argc == 2 ? list(c) : cat(c, argv[2], argc == 4 ? argv[3] : NULL);
    ap_close(c);
    return rc;
}
