/*
 * stress: libassetpacks' ownership rules checked from C, built with
 * AddressSanitizer (leak check on) by the tests.
 *
 *   stress CONTAINER PACK-FILE CYCLES
 *
 * CONTAINER holds the fixture's packs `base` and `extra` (CFixture);
 * PACK-FILE is base's pack file, reinstalled to check that held bytes
 * survive a replacement. Prints "ok" and exits 0 when every check passed;
 * otherwise names the first failed check on stderr and exits 1.
 */
#define _POSIX_C_SOURCE 200809L
#include <assetpacks.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(cond)                                                                     \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "%s:%d: check failed: %s (last error %d: %s)\n", __FILE__, \
                    __LINE__, #cond, ap_last_error_code(), ap_last_error_message());   \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

static const char *const paths[] = {"hello.txt", "media/clip.bin", "media/tiny.bin", "empty.txt", "shared.txt"};
enum { PATHS = sizeof paths / sizeof paths[0] };

/* Reads and releases every member `cycles` times in turn, comparing each
 * read with a checked copy of the same member. */
static void read_cycles(ap_container *c, long cycles) {
    char *copies[PATHS];
    size_t sizes[PATHS];
    for (int i = 0; i < PATHS; i++) {
        CHECK(ap_copy(c, "base", paths[i], NULL, 0, &sizes[i]) == AP_OK);
        copies[i] = malloc(sizes[i] ? sizes[i] : 1);
        size_t got = 0;
        CHECK(ap_copy(c, "base", paths[i], copies[i], sizes[i], &got) == AP_OK && got == sizes[i]);
    }
    for (long n = 0; n < cycles; n++) {
        int i = (int)(n % PATHS);
        const void *bytes = NULL;
        size_t size = 0;
        ap_data *held = NULL;
        /* shared.txt is in both packs: only the others are found without a pack ID. */
        const char *pack = n % 2 || strcmp(paths[i], "shared.txt") == 0 ? "base" : NULL;
        CHECK(ap_read(c, pack, paths[i], &bytes, &size, &held) == AP_OK);
        CHECK(bytes != NULL && held != NULL && size == sizes[i]);
        CHECK(memcmp(bytes, copies[i], size) == 0);
        ap_release(held);
    }
    for (int i = 0; i < PATHS; i++) free(copies[i]);
}

/* Bytes held across a replacement and a removal of their pack, and across
 * ap_close, stay the bytes they were. */
static void held_across_changes(const char *container, const char *pack_file) {
    ap_container *c;
    CHECK(ap_open(container, AP_OPEN_READWRITE, &c) == AP_OK);
    const void *clip, *hello;
    size_t clip_size, hello_size;
    ap_data *clip_held, *hello_held;
    CHECK(ap_read(c, "base", "media/clip.bin", &clip, &clip_size, &clip_held) == AP_OK);
    CHECK(ap_read(c, "base", "hello.txt", &hello, &hello_size, &hello_held) == AP_OK);
    char *clip_copy = malloc(clip_size), *hello_copy = malloc(hello_size);
    memcpy(clip_copy, clip, clip_size);
    memcpy(hello_copy, hello, hello_size);

    int change = -1;
    CHECK(ap_remove(c, "base") == AP_OK);
    const void *gone;
    size_t gone_size;
    ap_data *gone_held = NULL;
    CHECK(ap_read(c, "base", "hello.txt", &gone, &gone_size, &gone_held) == AP_ENOPACK && gone_held == NULL);
    CHECK(ap_install(c, pack_file, NULL, &change) == AP_OK && change == AP_INSTALLED);
    ap_close(c);

    CHECK(memcmp(clip, clip_copy, clip_size) == 0);
    CHECK(memcmp(hello, hello_copy, hello_size) == 0);
    ap_release(clip_held);
    ap_release(hello_held);
    free(clip_copy);
    free(hello_copy);
}

/* Descriptors belong to the caller: open and close many. */
static void descriptors(ap_container *c, int count) {
    for (int n = 0; n < count; n++) {
        ap_descriptor_info d = {.struct_size = sizeof d};
        CHECK(ap_get_descriptor(c, "base", paths[n % PATHS], n % 3 == 0 ? AP_DESCRIPTOR_STANDALONE : 0, &d) == AP_OK);
        CHECK(d.fd >= 0);
        CHECK(close(d.fd) == 0);
    }
}

/* Listings to the end and abandoned halfway, both freed. */
static void listings(ap_container *c) {
    for (int n = 0; n < 200; n++) {
        ap_packs *packs;
        CHECK(ap_packs_open(c, &packs) == AP_OK);
        ap_pack_info p = {.struct_size = sizeof p};
        int count = 0;
        while (ap_packs_next(packs, &p) == 1) count++;
        CHECK(count == 2);
        CHECK(ap_packs_next(packs, &p) == 0);
        ap_packs_free(packs);

        ap_members *members;
        CHECK(ap_members_open(c, "base", NULL, &members) == AP_OK);
        ap_member_info m = {.struct_size = sizeof m};
        CHECK(ap_members_next(members, &m) == 1);
        if (n % 2) {
            while (ap_members_next(members, &m) == 1) {}
        }
        ap_members_free(members);
        ap_member_info s = {.struct_size = sizeof s};
        CHECK(ap_stat(c, NULL, "media/clip.bin", &s) == AP_OK && s.size == 70000);
    }
}

/* Errors of every kind, many times: their messages are freed. */
static void errors(ap_container *c) {
    for (int n = 0; n < 500; n++) {
        const void *bytes;
        size_t size;
        ap_data *held;
        CHECK(ap_read(c, "nope", "x", &bytes, &size, &held) == AP_ENOPACK);
        CHECK(ap_read(c, "base", "nope", &bytes, &size, &held) == AP_ENOFILE);
        CHECK(strstr(ap_last_error_message(), "nope") != NULL);
        CHECK(ap_read(c, NULL, "shared.txt", &bytes, &size, &held) == AP_EAMBIGUOUS);
        CHECK(ap_read(c, "base", NULL, &bytes, &size, &held) == AP_EINVAL);
        CHECK(ap_read(NULL, "base", "hello.txt", &bytes, &size, &held) == AP_EINVAL);
        CHECK(ap_read(c, "base", "hello.txt", NULL, &size, &held) == AP_EINVAL);
        CHECK(ap_read(c, "base", "\xff\xfe", &bytes, &size, &held) == AP_EINVAL);
        /* A truncated 4-byte sequence, which repair would replace by a 3-byte one. */
        CHECK(ap_read(c, "base", "x\xf0\x9f\x98", &bytes, &size, &held) == AP_EINVAL);
        CHECK(ap_read(c, "\xc3", "hello.txt", &bytes, &size, &held) == AP_EINVAL);
        CHECK(ap_read(c, "base", "", &bytes, &size, &held) == AP_ENOFILE);
        char small[4];
        CHECK(ap_copy(c, "base", "hello.txt", small, sizeof small, &size) == AP_ERANGE && size == 5000);
        CHECK(ap_copy(c, "base", "hello.txt", NULL, 8, &size) == AP_EINVAL);
        ap_member_info old = {.struct_size = sizeof old - 1};
        CHECK(ap_stat(c, "base", "hello.txt", &old) == AP_EINVAL);
        CHECK(ap_install(c, "/nonexistent/x.zip", NULL, NULL) == AP_EREADONLY);
        CHECK(ap_remove(c, "base") == AP_EREADONLY);
        CHECK(ap_verify(c, AP_VERIFY_REPAIR, NULL, NULL) == AP_EREADONLY);
        CHECK(ap_verify(c, 0x80, NULL, NULL) == AP_EINVAL);
        ap_packs *packs = NULL;
        CHECK(ap_packs_open(NULL, &packs) == AP_EINVAL && packs == NULL);
    }
    ap_container *none = NULL;
    CHECK(ap_open("/nonexistent/container", AP_OPEN_READONLY, &none) == AP_ENOCONTAINER && none == NULL);
    CHECK(ap_open("/nonexistent/container", AP_OPEN_CREATE, &none) == AP_EINVAL);
    CHECK(ap_open("/nonexistent/container", 0x100, &none) == AP_EINVAL);
    /* NULL is accepted by every free function. */
    ap_release(NULL);
    ap_close(NULL);
    ap_packs_free(NULL);
    ap_members_free(NULL);
}

/* The last error is the calling thread's: two threads failing differently
 * at the same time each see their own. */
struct worker {
    ap_container *c;
    const char *pack;
    int expected;
    int ok;
};

static void *thread_errors(void *arg) {
    struct worker *w = arg;
    w->ok = 1;
    for (int n = 0; n < 2000 && w->ok; n++) {
        const void *bytes;
        size_t size;
        ap_data *held;
        int rc = ap_read(w->c, w->pack, "media/clip.bin", &bytes, &size, &held);
        if (rc == AP_OK) ap_release(held);
        if (rc != w->expected || ap_last_error_code() != w->expected) w->ok = 0;
        if (w->expected == AP_ENOPACK && strstr(ap_last_error_message(), w->pack) == NULL) w->ok = 0;
        if (w->expected == AP_ENOPACK && (ap_last_error_pack() == NULL || strcmp(ap_last_error_pack(), w->pack) != 0)) w->ok = 0;
    }
    return NULL;
}

static void thread_local_errors(ap_container *c) {
    struct worker a = {c, "missing-a", AP_ENOPACK, 0}, b = {c, "missing-b", AP_ENOPACK, 0}, r = {c, "base", AP_OK, 0};
    pthread_t ta, tb, tr;
    CHECK(pthread_create(&ta, NULL, thread_errors, &a) == 0);
    CHECK(pthread_create(&tb, NULL, thread_errors, &b) == 0);
    CHECK(pthread_create(&tr, NULL, thread_errors, &r) == 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    pthread_join(tr, NULL);
    CHECK(a.ok && b.ok);
    /* r never failed, so its thread's last error stayed AP_OK. */
    CHECK(r.ok);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: stress CONTAINER PACK-FILE CYCLES\n");
        return 64;
    }
    long cycles = strtol(argv[3], NULL, 10);
    ap_container *c;
    CHECK(ap_open(argv[1], AP_OPEN_READONLY, &c) == AP_OK);
    read_cycles(c, cycles);
    descriptors(c, 300);
    listings(c);
    errors(c);
    thread_local_errors(c);
    ap_close(c);
    held_across_changes(argv[1], argv[2]);
    CHECK(ap_open(argv[1], AP_OPEN_READONLY, &c) == AP_OK);
    read_cycles(c, 100);
    ap_close(c);
    printf("ok\n");
    return 0;
}
