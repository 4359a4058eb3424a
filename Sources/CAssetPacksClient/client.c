/* libassetpacks-client: the descriptor daemon's protocol (version 1) in plain C.
 *
 * The wire format is documented in docs/daemon-protocol.md; the Swift side
 * (Sources/AssetPacks/DaemonProtocol*.swift, AssetPackClient.swift) is the
 * reference this file follows, check for check. Only libc is used. */
#define _GNU_SOURCE
#define APC_BUILDING_LIBRARY 1
#include "assetpacks-client.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

enum {
    HEADER_SIZE = 16,
    MAX_REQUEST_BODY = 8192,
    MAX_REPLY_BODY = 65536,
    SUCCESS_BODY_SIZE = 32,
    KIND_DESCRIPTOR = 1,
    KIND_BATCH = 3,
    MAX_BATCH = 64,
    STATUS_MALFORMED = 65,
    STATUS_TOO_LARGE = 66,
    FLAG_STANDALONE = 1,
    FLAG_SHARED = 2,
    FLAG_KEEP = 4,
    KEPT_SLOTS = 4,
    /* Room for this many descriptors in one message's control data: a reply
     * carries one, more are a violation that must still be received to be closed. */
    CONTROL_FDS = 16,
};

static const unsigned char request_magic[4] = {'A', 'P', 'D', 'Q'};
static const unsigned char reply_magic[4] = {'A', 'P', 'D', 'R'};

/* The shortest apc_descriptor a caller may pass: version 1's. */
#define DESCRIPTOR_V1_SIZE (offsetof(apc_descriptor, crc32) + sizeof(uint32_t))

struct apc_client {
    int sock;                 /* -1 when not connected */
    int timeout_ms;           /* >= 1, or APC_NO_TIMEOUT */
    bool shared_unsupported;  /* the daemon refused FLAG_SHARED (it predates it): not sent again */
    bool keep_unsupported;    /* the daemon refused FLAG_KEEP (it predates it): not sent again */
    /* The shared descriptions this connection was passed to keep, slot n at
     * n - 1, or -1: they go with the connection. */
    int kept[KEPT_SLOTS];
    char *socket_path;        /* NULL until apc_connect_* */
    unsigned char *request;   /* HEADER_SIZE + MAX_REQUEST_BODY */
    unsigned char *reply;     /* HEADER_SIZE + MAX_REPLY_BODY */
    /* The last error. Fields are kept as [u16 length][bytes][NUL] one after
     * another in `fields` (room for a whole reply body plus a NUL per field). */
    int status, number, reason, field_count;
    unsigned char *fields;
    char *message;            /* malloc'd, or NULL: then `fallback` */
    const char *fallback;
};

/* MARK: Little-endian integers */

static uint16_t get16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t get32(const unsigned char *p) { return (uint32_t)get16(p) | (uint32_t)get16(p + 2) << 16; }
static int64_t get64(const unsigned char *p) { return (int64_t)((uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32); }
static void put16(unsigned char *p, uint16_t v) { p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8); }
static void put32(unsigned char *p, uint32_t v) { put16(p, (uint16_t)v); put16(p + 2, (uint16_t)(v >> 16)); }

/* MARK: Error details */

static void clear_error(apc_client *c) {
    free(c->message);
    c->message = NULL;
    c->fallback = "";
    c->status = c->number = c->reason = c->field_count = 0;
}

/* Sets the message from a format; keeps `code` and returns it. */
static int fail(apc_client *c, int code, int number, const char *format, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(apc_client *c, int code, int number, const char *format, ...) {
    free(c->message);
    c->message = NULL;
    c->number = number;
    va_list args;
    va_start(args, format);
    int n = vsnprintf(NULL, 0, format, args);
    va_end(args);
    if (n >= 0 && (c->message = malloc((size_t)n + 1)) != NULL) {
        va_start(args, format);
        vsnprintf(c->message, (size_t)n + 1, format, args);
        va_end(args);
    } else {
        c->fallback = apc_strerror(code);
    }
    return code;
}

static const char *errno_text(int e, char *buffer, size_t size) {
    return strerror_r(e, buffer, size);  /* the GNU strerror_r: may return a static string */
}

/* The daemon at the socket cannot be reached, or the exchange broke:
 * "descriptor daemon at S is unavailable: WHAT: strerror(e)", as the Swift client says. */
static int unavailable(apc_client *c, int e, const char *what) {
    char text[128];
    return fail(c, APC_EDAEMON, e, "descriptor daemon at %s is unavailable: %s: %s",
                c->socket_path, what, errno_text(e, text, sizeof text));
}

/* Memory ran out in this process: the system code, with ENOMEM. */
static int out_of_memory(apc_client *c, const char *what) {
    return fail(c, APC_ESYSTEM, ENOMEM, "%s: out of memory", what);
}

/* MARK: Time */

static int64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* The deadline of a call that starts now, or -1 for none. */
static int64_t deadline_after(int timeout_ms) { return timeout_ms < 0 ? -1 : now_ms() + timeout_ms; }

/* Milliseconds left until `deadline` for poll (-1: no limit, 0: none left). */
static int remaining_ms(int64_t deadline) {
    if (deadline < 0) return -1;
    int64_t left = deadline - now_ms();
    return left <= 0 ? 0 : left > 1000000000 ? 1000000000 : (int)left;
}

/* Waits until `sock` is ready for `events` or the deadline passes (a deadline
 * already past still looks once). 0 when ready, else an errno (ETIMEDOUT, or poll's). */
static int wait_for(int sock, short events, int64_t deadline) {
    for (;;) {
        struct pollfd p = {.fd = sock, .events = events};
        int n = poll(&p, 1, remaining_ms(deadline));
        if (n > 0) return 0;
        if (n == 0) return ETIMEDOUT;
        if (errno != EINTR) return errno;
    }
}

/* MARK: Connecting */

static void disconnect(apc_client *c) {
    if (c->sock >= 0) close(c->sock);
    c->sock = -1;
    for (int i = 0; i < KEPT_SLOTS; i++) {
        if (c->kept[i] >= 0) close(c->kept[i]);
        c->kept[i] = -1;
    }
}

/* Connects to c->socket_path within `deadline`: 0 or an APC code. */
static int open_connection(apc_client *c, int64_t deadline) {
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    size_t length = strlen(c->socket_path);
    if (length >= sizeof address.sun_path) return unavailable(c, ENAMETOOLONG, "connect");
    memcpy(address.sun_path, c->socket_path, length + 1);
    int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (sock < 0) return unavailable(c, errno, "socket");   /* EMFILE, ENFILE, ...: as the Swift client says */
    /* A Unix socket's connect waits (for room in the listener's backlog) up to
     * SO_SNDTIMEO, so a blocking connect bounded by it, then non-blocking I/O. */
    int e = 0;
    for (bool first = true;; first = false) {
        int left = remaining_ms(deadline);
        if (left == 0 && !first) { e = ETIMEDOUT; break; }
        if (left == 0) left = 1;   /* one try even when the deadline has passed (0 would be "none") */
        struct timeval tv = {.tv_sec = left < 0 ? 0 : left / 1000, .tv_usec = left < 0 ? 0 : (left % 1000) * 1000};
        if (setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0) { e = errno; break; }
        if (connect(sock, (const struct sockaddr *)&address, sizeof address) == 0) break;
        e = errno;
        if (e == EISCONN) { e = 0; break; }   /* a connect interrupted after it completed */
        if (e == EINTR) { e = 0; continue; }
        if (e == EAGAIN || e == EINPROGRESS) e = ETIMEDOUT;
        break;
    }
    struct timeval none = {0, 0};
    if (e == 0 && setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &none, sizeof none) != 0) e = errno;
    if (e == 0) {
        int flags = fcntl(sock, F_GETFL);
        if (flags < 0 || fcntl(sock, F_SETFL, flags | O_NONBLOCK) < 0) e = errno;
    }
    if (e != 0) {
        close(sock);
        return unavailable(c, e, "connect");
    }
    c->sock = sock;
    return APC_OK;
}

static int connect_to(apc_client *c, const char *socket_path) {
    if (c == NULL) return APC_EINVAL;
    clear_error(c);
    if (socket_path == NULL) return fail(c, APC_EINVAL, 0, "no socket path");
    char *copy = strdup(socket_path);
    if (copy == NULL) return out_of_memory(c, "connect");
    disconnect(c);
    free(c->socket_path);
    c->socket_path = copy;
    c->shared_unsupported = false;   /* perhaps another daemon */
    c->keep_unsupported = false;
    return open_connection(c, deadline_after(c->timeout_ms));
}

/* MARK: The exchange */

typedef enum {
    OUTCOME_CONTINUE,       /* (receive_some) more to read */
    OUTCOME_DESCRIPTOR,     /* *fd and c->reply hold a success */
    OUTCOME_FAILURE,        /* the daemon answered with an error: c->reply holds it */
    OUTCOME_CLOSED_EARLY,   /* the connection ended before any byte of the reply */
    OUTCOME_BROKEN,         /* c's error is set (APC_EDAEMON) */
} outcome;

/* Sends all of `bytes`; 0, or the errno that ended it. */
static int send_all(int sock, const unsigned char *bytes, size_t count, int64_t deadline) {
    size_t sent = 0;
    while (sent < count) {
        ssize_t n = send(sock, bytes + sent, count - sent, MSG_NOSIGNAL);
        if (n >= 0) { sent += (size_t)n; continue; }
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return errno;
        int e = wait_for(sock, POLLOUT, deadline);
        if (e != 0) return e;
    }
    return 0;
}

/* A reply that breaks the protocol: the connection goes, EPROTO. */
static outcome violation(apc_client *c, const char *what) {
    char text[256];
    snprintf(text, sizeof text, "read reply: the daemon sent %s", what);
    unavailable(c, EPROTO, text);
    return OUTCOME_BROKEN;
}

/* Receives into c->reply[*filled ..< needed], taking any descriptors sent
 * with the bytes: the first into *fd, a second is a violation (both closed).
 * Returns OUTCOME_CONTINUE, or the outcome that ends the exchange. */
static outcome receive_some(apc_client *c, size_t *filled, size_t needed, int *fd, int64_t deadline) {
    union {
        struct cmsghdr align;
        char bytes[CMSG_SPACE(sizeof(int) * CONTROL_FDS)];
    } control;
    struct iovec iov = {.iov_base = c->reply + *filled, .iov_len = needed - *filled};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.bytes, .msg_controllen = sizeof control.bytes};
    ssize_t n = recvmsg(c->sock, &m, MSG_CMSG_CLOEXEC);
    if (n < 0) {
        int e = errno;
        if (e == EINTR) return OUTCOME_CONTINUE;
        if (e == EAGAIN || e == EWOULDBLOCK) {
            e = wait_for(c->sock, POLLIN, deadline);
            if (e == 0) return OUTCOME_CONTINUE;
            if (e == ETIMEDOUT) {
                char what[96];
                if (c->timeout_ms % 1000 == 0) snprintf(what, sizeof what, "read reply: no answer within %d s", c->timeout_ms / 1000);
                else snprintf(what, sizeof what, "read reply: no answer within %.3f s", c->timeout_ms / 1000.0);
                unavailable(c, e, what);
                return OUTCOME_BROKEN;
            }
        }
        if (*filled == 0 && e == ECONNRESET) return OUTCOME_CLOSED_EARLY;
        unavailable(c, e, "read reply");
        return OUTCOME_BROKEN;
    }
    /* Every descriptor that arrived, before judging any of them. */
    bool extra = false;
    for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h != NULL; h = CMSG_NXTHDR(&m, h)) {
        if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS) continue;
        size_t count = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; i++) {
            int received;
            memcpy(&received, CMSG_DATA(h) + i * sizeof(int), sizeof received);
            if (*fd < 0) *fd = received;
            else { close(received); extra = true; }
        }
    }
    if (extra) return violation(c, "two descriptors in one reply");
    /* The kernel closed what did not fit; still more than one. */
    if (m.msg_flags & MSG_CTRUNC) return violation(c, "two descriptors in one reply");
    if (n == 0) {
        if (*filled == 0) return OUTCOME_CLOSED_EARLY;
        char what[64];
        snprintf(what, sizeof what, "the reply ended after %zu bytes", *filled);
        return violation(c, what);
    }
    *filled += (size_t)n;
    return OUTCOME_CONTINUE;
}

/* Receives one whole reply into c->reply: its status and body length. */
static outcome receive_reply(apc_client *c, int *fd, uint16_t *status, size_t *body, int64_t deadline) {
    size_t filled = 0, needed = HEADER_SIZE;
    bool parsed = false;
    for (;;) {
        while (filled < needed) {
            outcome o = receive_some(c, &filled, needed, fd, deadline);
            if (o != OUTCOME_CONTINUE) return o;
        }
        if (parsed) break;
        const unsigned char *h = c->reply;
        if (memcmp(h, reply_magic, 4) != 0) return violation(c, "bad magic");
        if (get16(h + 4) != APC_PROTOCOL_VERSION) {
            char what[48];
            snprintf(what, sizeof what, "protocol version %u", (unsigned)get16(h + 4));
            return violation(c, what);
        }
        uint32_t length = get32(h + 8);
        if (length > MAX_REPLY_BODY) {
            char what[48];
            snprintf(what, sizeof what, "a body of %lu bytes", (unsigned long)length);
            return violation(c, what);
        }
        *status = get16(h + 6);
        needed = HEADER_SIZE + length;
        parsed = true;
    }
    *body = needed - HEADER_SIZE;
    return *status == 0 ? OUTCOME_DESCRIPTOR : OUTCOME_FAILURE;
}

/* Sends the request (HEADER_SIZE + body bytes in c->request) and receives its reply. */
static outcome exchange(apc_client *c, size_t request_size, int *fd, uint16_t *status, size_t *body, int64_t deadline) {
    int e = send_all(c->sock, c->request, request_size, deadline);
    /* A daemon that closed the connection may have said why first (a
     * refusal): read on, and an empty stream means it did not. */
    if (e != 0 && e != EPIPE && e != ECONNRESET) {
        unavailable(c, e, e == ETIMEDOUT ? "send request: the daemon took no request in time" : "send request");
        return OUTCOME_BROKEN;
    }
    return receive_reply(c, fd, status, body, deadline);
}

/* MARK: Reading replies */

/* Whether `p[0..<n]` is well-formed UTF-8 (no overlong forms, surrogates, or
 * values past U+10FFFF), as Swift's String(validating:) requires. */
static bool valid_utf8(const unsigned char *p, size_t n) {
    size_t i = 0;
    while (i < n) {
        unsigned char b = p[i];
        size_t extra;
        uint32_t v;
        if (b < 0x80) { i++; continue; }
        else if (b >= 0xc2 && b <= 0xdf) { extra = 1; v = b & 0x1f; }
        else if (b >= 0xe0 && b <= 0xef) { extra = 2; v = b & 0x0f; }
        else if (b >= 0xf0 && b <= 0xf4) { extra = 3; v = b & 0x07; }
        else return false;
        if (n - i <= extra) return false;
        for (size_t k = 1; k <= extra; k++) {
            if ((p[i + k] & 0xc0) != 0x80) return false;
            v = v << 6 | (p[i + k] & 0x3f);
        }
        if ((extra == 2 && (v < 0x800 || (v >= 0xd800 && v <= 0xdfff))) || (extra == 3 && (v < 0x10000 || v > 0x10ffff)))
            return false;
        i += extra + 1;
    }
    return true;
}

/* Field `index` of the stored error: its bytes (NUL-terminated) and length.
 * The caller keeps `index` within the fields stored (the message is the last). */
static const char *stored_field(const apc_client *c, int index, size_t *length) {
    const unsigned char *at = c->fields;
    for (int i = 0; i < index; i++) at += 2 + get16(at) + 1;
    if (length) *length = get16(at);
    return (const char *)at + 2;
}

static bool parse_int32(const char *text, size_t length, int *value);

/* Whether stored field `index` is a reason (a decimal number); sets *reason. */
static bool reason_at(const apc_client *c, int index, int *reason) {
    size_t length;
    const char *text = stored_field(c, index, &length);
    return parse_int32(text, length, reason);
}

/* Parses a decimal Int32 as Swift's Int32(String) does (optional sign, digits only). */
static bool parse_int32(const char *text, size_t length, int *value) {
    size_t i = 0;
    bool negative = false;
    if (i < length && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
    if (i == length) return false;
    int64_t v = 0;
    for (; i < length; i++) {
        if (text[i] < '0' || text[i] > '9') return false;
        v = v * 10 + (text[i] - '0');
        if (v > (int64_t)INT32_MAX + 1) return false;
    }
    v = negative ? -v : v;
    if (v > INT32_MAX) return false;
    *value = (int)v;
    return true;
}

/* Whether status `s` is a code of the table (AssetPackError.Code). */
static bool known_code(unsigned s) {
    return (s >= 1 && s <= 10) || (s >= 16 && s <= 25) || (s >= 32 && s <= 41) || (s >= 48 && s <= 56) || (s >= 64 && s <= 70);
}

/* Reads a failure body (c->reply + HEADER_SIZE, `size` bytes) with `status`
 * into the handle's error: the APC code, or APC_EDAEMON (EPROTO)
 * when it breaks the protocol. */
static int read_failure(apc_client *c, uint16_t status, size_t size) {
    const unsigned char *body = c->reply + HEADER_SIZE;
    char what[96];
    if (size < 10) {
        snprintf(what, sizeof what, "a failure body of %zu bytes", size);
        violation(c, what);
        return APC_EDAEMON;
    }
    int64_t number = get64(body);
    unsigned count = get16(body + 8);
    size_t at = 10;
    unsigned char *out = c->fields;
    for (unsigned i = 0; i < count; i++) {
        if (at + 2 > size) { violation(c, "a field past the end"); return APC_EDAEMON; }
        size_t n = get16(body + at);
        if (at + 2 + n > size || !valid_utf8(body + at + 2, n)) {
            violation(c, "a field past the end or not UTF-8");
            return APC_EDAEMON;
        }
        memcpy(out, body + at, 2 + n);
        out[2 + n] = 0;
        out += 2 + n + 1;
        at += 2 + n;
    }
    if (at != size || count == 0) { violation(c, "a failure without a message"); return APC_EDAEMON; }
    int f = (int)count - 1;   /* fields before the message */
    const char *message = stored_field(c, f, NULL);
    int reason = 0;
    bool ok = true;
    switch (status) {
    case 1: ok = f == 1; break;
    case 2: ok = f >= 1 && f <= 2; break;
    case 3: ok = f >= 1; break;
    case 4: case 5: ok = f == 2 && reason_at(c, 1, &reason); break;
    case 6: ok = f >= 2 && f <= 3 && reason_at(c, 1, &reason); break;
    case 7: ok = f == 2; break;
    case 8: ok = f == 3 && reason_at(c, 2, &reason); break;
    case 24: ok = f == 4 && reason_at(c, 2, &reason); break;
    case 70: ok = f == 3 && reason_at(c, 2, &reason); break;
    case 9: case 10: ok = f <= 1 && number >= INT32_MIN && number <= INT32_MAX; break;
    default: break;
    }
    if (!ok) {
        snprintf(what, sizeof what, "status %u with %d fields", (unsigned)status, f);
        violation(c, what);
        return APC_EDAEMON;
    }
    int code;
    if (status == 9 || status == 10) {
        code = fail(c, -(int)status, (int)number, "descriptor daemon: %s", message);
    } else if (status >= 64 && status <= 70) {
        code = fail(c, -(int)status, 0, "descriptor daemon at %s refused the request: %s", c->socket_path, message);
    } else if (status <= 8 || status == 24) {
        code = fail(c, -(int)status, 0, "%s", message);
    } else if (!known_code(status)) {
        /* A status of a newer daemon: an error all the same. */
        code = fail(c, APC_EDAEMONFAILED, 0, "descriptor daemon at %s: %s", c->socket_path, message);
    } else {
        snprintf(what, sizeof what, "status %u, which the daemon does not send", (unsigned)status);
        violation(c, what);
        return APC_EDAEMON;
    }
    c->status = status;
    c->reason = reason;
    c->field_count = f;
    return code;
}

/* Reads a success body into `d`, with the descriptor `fd` that came with it
 * (-1: none) or, for a reply that names a kept slot instead, a new
 * descriptor of the kept one; a descriptor that comes for a slot is kept
 * there. `keeps`: whether the request had FLAG_KEEP. On APC_EDAEMON `fd`
 * is still the caller's to close. */
static int read_success(apc_client *c, int fd, size_t size, bool keeps, apc_descriptor *d) {
    const unsigned char *body = c->reply + HEADER_SIZE;
    char what[128];
    if (size != SUCCESS_BODY_SIZE) {
        snprintf(what, sizeof what, "a success body of %zu bytes", size);
        violation(c, what);
        return APC_EDAEMON;
    }
    int64_t offset = get64(body), length = get64(body + 8), file_size = get64(body + 16);
    if (body[24] > 1) {
        snprintf(what, sizeof what, "a descriptor source %u", (unsigned)body[24]);
        violation(c, what);
        return APC_EDAEMON;
    }
    if (offset < 0 || length < 0 || file_size < 0 || offset > file_size || length > file_size - offset) {
        snprintf(what, sizeof what, "a range %lld+%lld outside a file of %lld bytes",
                 (long long)offset, (long long)length, (long long)file_size);
        violation(c, what);
        return APC_EDAEMON;
    }
    unsigned slot = body[25], reuse = body[26];
    if (reuse > 1 || body[27] != 0) {
        snprintf(what, sizeof what, "a success with reserved bytes %u %u", reuse, (unsigned)body[27]);
    } else if (slot > KEPT_SLOTS) {
        snprintf(what, sizeof what, "kept slot %u", slot);
    } else if (slot != 0 && !keeps) {
        snprintf(what, sizeof what, "kept slot %u to a request that keeps none", slot);
    } else if (slot != 0 && body[24] != 0) {
        snprintf(what, sizeof what, "a memory file for kept slot %u", slot);
    } else if (reuse && slot == 0) {
        snprintf(what, sizeof what, "a reuse of no kept slot");
    } else if (reuse && fd >= 0) {
        snprintf(what, sizeof what, "a descriptor with a reply that reuses kept slot %u", slot);
    } else if (reuse && c->kept[slot - 1] < 0) {
        snprintf(what, sizeof what, "a reuse of kept slot %u, which holds nothing", slot);
    } else if (!reuse && fd < 0) {
        snprintf(what, sizeof what, "a success without a descriptor");
    } else {
        what[0] = 0;
    }
    if (what[0]) {
        violation(c, what);
        return APC_EDAEMON;
    }
    if (slot != 0) {
        if (!reuse) {
            if (c->kept[slot - 1] >= 0) close(c->kept[slot - 1]);
            c->kept[slot - 1] = fd;
        }
        /* The caller's own descriptor of the kept description, at the member. */
        fd = fcntl(c->kept[slot - 1], F_DUPFD_CLOEXEC, 0);
        if (fd < 0 || (reuse && lseek(fd, offset, SEEK_SET) < 0)) {
            int e = errno;
            char text[128];
            if (fd >= 0) close(fd);
            return fail(c, APC_ESYSTEM, e, "descriptor daemon at %s: cannot duplicate a kept descriptor: %s", c->socket_path,
                        errno_text(e, text, sizeof text));
        }
    }
    d->fd = fd;
    d->source = body[24] == 0 ? APC_SOURCE_ARCHIVE : APC_SOURCE_MEMORY;
    d->offset = offset;
    d->length = length;
    d->file_size = file_size;
    d->crc32 = get32(body + 28);
    return APC_OK;
}

/* MARK: Public functions */

const char *apc_version(int *major, int *minor, int *patch) {
    if (major) *major = APC_VERSION_MAJOR;
    if (minor) *minor = APC_VERSION_MINOR;
    if (patch) *patch = APC_VERSION_PATCH;
    return APC_VERSION_STRING;
}

const char *apc_strerror(int code) {
    switch (code) {
    case APC_OK: return "success";
    case APC_ENOPACK: return "no asset pack with this ID is installed";
    case APC_ENOFILE: return "no file at this path";
    case APC_EAMBIGUOUS: return "the path is in several asset packs; name one";
    case APC_EPACKID: return "invalid asset pack ID";
    case APC_EPATH: return "invalid member path";
    case APC_ECORRUPT: return "a record in the container's index is damaged";
    case APC_EARCHIVEMISSING: return "an installed asset pack's archive is missing";
    case APC_EBADARCHIVE: return "an asset pack file is malformed or damaged";
    case APC_ESYSTEM: return "a system call failed (or memory ran out)";
    case APC_EINDEX: return "the container's index failed in the descriptor daemon";
    case APC_EDAEMON: return "the descriptor daemon is unavailable";
    case APC_ELIMIT: return "a member exceeds the container's limits";
    case APC_EPEER: return "the descriptor daemon does not serve this user";
    case APC_EREQUEST: return "the descriptor daemon found the request malformed";
    case APC_EREQUESTTOOLARGE: return "the request is longer than the descriptor daemon reads";
    case APC_EPROTOCOL: return "the descriptor daemon speaks another protocol version";
    case APC_EBUSY: return "the descriptor daemon is busy; try again";
    case APC_EDAEMONFAILED: return "the descriptor daemon failed";
    case APC_ENOTPERMITTED: return "the descriptor daemon does not permit this request to this user";
    case APC_EINVAL: return "invalid argument";
    default: return "unknown error code";
    }
}

int apc_create(apc_client **client) {
    if (client == NULL) return APC_EINVAL;
    *client = NULL;
    apc_client *c = calloc(1, sizeof *c);
    if (c == NULL) return APC_ESYSTEM;
    c->sock = -1;
    for (int i = 0; i < KEPT_SLOTS; i++) c->kept[i] = -1;
    c->timeout_ms = APC_DEFAULT_TIMEOUT_MS;
    c->fallback = "";
    c->request = malloc(HEADER_SIZE + MAX_REQUEST_BODY);
    c->reply = malloc(HEADER_SIZE + MAX_REPLY_BODY);
    /* A field grows by its NUL: at most (MAX_REPLY_BODY - 10) / 2 fields. */
    c->fields = malloc(MAX_REPLY_BODY + MAX_REPLY_BODY / 2);
    if (c->request == NULL || c->reply == NULL || c->fields == NULL) {
        apc_close(c);
        return APC_ESYSTEM;
    }
    *client = c;
    return APC_OK;
}

int apc_set_timeout(apc_client *client, int milliseconds) {
    if (client == NULL) return APC_EINVAL;
    clear_error(client);
    if (milliseconds < 1 && milliseconds != APC_NO_TIMEOUT)
        return fail(client, APC_EINVAL, 0, "a timeout of %d ms (1 or more, or APC_NO_TIMEOUT)", milliseconds);
    client->timeout_ms = milliseconds;
    return APC_OK;
}

int apc_connect_socket(apc_client *client, const char *socket_path) { return connect_to(client, socket_path); }

int apc_connect_container(apc_client *client, const char *container_path) {
    if (client == NULL) return APC_EINVAL;
    clear_error(client);
    if (container_path == NULL) return fail(client, APC_EINVAL, 0, "no container path");
    size_t n = strlen(container_path);
    char *path = malloc(n + sizeof "/daemon.sock");
    if (path == NULL) return out_of_memory(client, "connect");
    memcpy(path, container_path, n);
    memcpy(path + n, "/daemon.sock", sizeof "/daemon.sock");
    int rc = connect_to(client, path);
    free(path);
    return rc;
}

void apc_close(apc_client *client) {
    if (client == NULL) return;
    disconnect(client);
    free(client->socket_path);
    free(client->request);
    free(client->reply);
    free(client->fields);
    free(client->message);
    free(client);
}

/* The header flags of a request with the caller's `flags`: shared
 * positions only to a daemon that has not refused them, and only with
 * strings the daemon will take (else its refusal of the body would read as
 * one of the flag; see refused_shared). */
static uint16_t wire_flags(const apc_client *c, unsigned flags, bool valid_strings) {
    bool shared = (flags & APC_SHARED) && !c->shared_unsupported && valid_strings;
    return (uint16_t)(((flags & APC_STANDALONE) ? FLAG_STANDALONE : 0) | (shared ? FLAG_SHARED : 0) |
                      (shared && !c->keep_unsupported ? FLAG_KEEP : 0));
}

/* Writes a request header of `kind` into q for a body of `body` bytes. */
static void put_header(const apc_client *c, unsigned char *q, uint16_t kind, size_t body, unsigned flags, size_t pack_length,
                       bool valid_strings) {
    memcpy(q, request_magic, 4);
    put16(q + 4, APC_PROTOCOL_VERSION);
    put16(q + 6, kind);
    put32(q + 8, (uint32_t)body);
    put16(q + 12, wire_flags(c, flags, valid_strings));
    put16(q + 14, (uint16_t)pack_length);
}

/* Whether the failure just received is a daemon's that predates the newest
 * flag sent, FLAG_KEEP or FLAG_SHARED, refusing it ("unknown flags 6" or
 * "unknown flags 2", then it closes the connection): only such a daemon
 * finds a request this library makes malformed, since the flags go only
 * with strings that are UTF-8 (a batch's count and lengths are always
 * right). The request in c->request is then made without that flag, and
 * the connection closed, to be sent again. */
static bool refused_shared(apc_client *c, outcome o, int fd, uint16_t status) {
    if (o != OUTCOME_FAILURE || fd >= 0 || status != STATUS_MALFORMED || !(c->request[12] & FLAG_SHARED)) return false;
    if (c->request[12] & FLAG_KEEP) {
        c->keep_unsupported = true;
        c->request[12] &= (unsigned char)~FLAG_KEEP;
    } else {
        c->shared_unsupported = true;
        c->request[12] &= (unsigned char)~FLAG_SHARED;
    }
    disconnect(c);
    clear_error(c);
    return true;
}

/* What one received reply (a success or a failure) gives the member `d`:
 * APC_OK with the descriptor in `d`, the member's error, or APC_EDAEMON
 * after a reply that breaks the protocol (the connection is closed then). */
static int member_result(apc_client *c, outcome o, int fd, uint16_t status, size_t body, apc_descriptor *d) {
    if (o == OUTCOME_DESCRIPTOR) {
        int rc = read_success(c, fd, body, (c->request[12] & FLAG_KEEP) != 0, d);
        if (rc == APC_EDAEMON) {
            if (fd >= 0) close(fd);
            disconnect(c);
        }
        return rc;
    }
    if (fd >= 0) {
        close(fd);
        violation(c, "a failure with a descriptor");
        disconnect(c);
        return APC_EDAEMON;
    }
    int rc = read_failure(c, status, body);
    if (rc == APC_EDAEMON) disconnect(c);
    return rc;
}

int apc_request(apc_client *c, const char *pack_id, const char *path, unsigned flags, apc_descriptor *d) {
    if (c == NULL) return APC_EINVAL;
    clear_error(c);
    if (d == NULL || d->struct_size < DESCRIPTOR_V1_SIZE)
        return fail(c, APC_EINVAL, 0, "no apc_descriptor, or one smaller than version 1's (set struct_size)");
    d->fd = -1;
    if (path == NULL) return fail(c, APC_EINVAL, 0, "no member path");
    if (flags & ~(APC_STANDALONE | APC_SHARED)) return fail(c, APC_EINVAL, 0, "unknown flags %#x", flags & ~(APC_STANDALONE | APC_SHARED));
    if (c->socket_path == NULL) return fail(c, APC_EINVAL, 0, "the handle is not connected (apc_connect_socket)");
    size_t pack_length = pack_id ? strlen(pack_id) : 0, path_length = strlen(path);
    if (pack_length > MAX_REQUEST_BODY || path_length > MAX_REQUEST_BODY - pack_length)
        return fail(c, APC_EREQUESTTOOLARGE, 0, "a request for '%s' is longer than the %d bytes the daemon reads", path, MAX_REQUEST_BODY);
    unsigned char *q = c->request;
    put_header(c, q, KIND_DESCRIPTOR, pack_length + path_length, flags, pack_length,
               valid_utf8((const unsigned char *)(pack_id ? pack_id : ""), pack_length) && valid_utf8((const unsigned char *)path, path_length));
    if (pack_length) memcpy(q + HEADER_SIZE, pack_id, pack_length);
    memcpy(q + HEADER_SIZE + pack_length, path, path_length);
    size_t request_size = HEADER_SIZE + pack_length + path_length;

    int64_t deadline = deadline_after(c->timeout_ms);
    bool reconnected = false;
    for (;;) {
        bool fresh = c->sock < 0;
        int rc = fresh ? open_connection(c, deadline) : APC_OK;
        if (rc != APC_OK) return rc;
        int fd = -1;
        uint16_t status = 0;
        size_t body = 0;
        outcome o = exchange(c, request_size, &fd, &status, &body, deadline);
        if (refused_shared(c, o, fd, status)) continue;
        switch (o) {
        case OUTCOME_DESCRIPTOR:
        case OUTCOME_FAILURE:
            return member_result(c, o, fd, status, body, d);
        case OUTCOME_CLOSED_EARLY:
            if (fd >= 0) close(fd);
            disconnect(c);
            /* A daemon that restarted or closed an idle connection: requests
             * are idempotent, so ask once more. */
            if (!fresh && !reconnected) {
                reconnected = true;
                continue;
            }
            return unavailable(c, ECONNRESET, "read reply: the daemon closed the connection");
        case OUTCOME_BROKEN:
        case OUTCOME_CONTINUE:   /* not returned by exchange */
            if (fd >= 0) close(fd);
            disconnect(c);
            return APC_EDAEMON;
        }
    }
}

const char *apc_message(const apc_client *client) {
    if (client == NULL) return "no handle";
    return client->message ? client->message : client->fallback;
}

int apc_error_number(const apc_client *client) { return client ? client->number : 0; }
int apc_error_status(const apc_client *client) { return client ? client->status : 0; }
int apc_error_field_count(const apc_client *client) { return client ? client->field_count : 0; }
int apc_error_reason(const apc_client *client) { return client ? client->reason : 0; }

const char *apc_error_field(const apc_client *client, int index) {
    if (client == NULL || index < 0 || index >= client->field_count) return NULL;
    return stored_field(client, index, NULL);
}

/* The batch's member `i` in the caller's array, whose elements are
 * `stride` (the caller's sizeof(apc_descriptor)) bytes apart. */
static apc_descriptor *member_at(apc_descriptor *descriptors, size_t stride, size_t i) {
    return (apc_descriptor *)(void *)((unsigned char *)descriptors + i * stride);
}

/* Closes the descriptors the first `count` members of a batch hold. */
static void close_members(apc_descriptor *descriptors, size_t stride, size_t count) {
    for (size_t j = 0; j < count; j++) {
        apc_descriptor *d = member_at(descriptors, stride, j);
        if (d->fd >= 0) { close(d->fd); d->fd = -1; }
    }
}

/* The members one by one, for a daemon that predates batches. */
static int request_singly(apc_client *c, const char *pack_id, const char *const *paths, size_t count, unsigned flags,
                          apc_descriptor *descriptors, size_t stride, int *results) {
    for (size_t i = 0; i < count; i++) {
        int rc = apc_request(c, pack_id, paths[i], flags, member_at(descriptors, stride, i));
        if (rc == APC_EDAEMON) {
            close_members(descriptors, stride, i);
            return rc;
        }
        results[i] = rc;
    }
    return APC_OK;
}

int apc_request_batch(apc_client *c, const char *pack_id, const char *const *paths, size_t count, unsigned flags,
                      apc_descriptor *descriptors, int *results) {
    if (c == NULL) return APC_EINVAL;
    clear_error(c);
    if (paths == NULL || descriptors == NULL || results == NULL) return fail(c, APC_EINVAL, 0, "no paths, descriptors or results");
    if (count == 0 || count > MAX_BATCH) return fail(c, APC_EINVAL, 0, "a batch of %zu members (1 to %d)", count, MAX_BATCH);
    size_t stride = descriptors[0].struct_size;
    for (size_t i = 0; i < count; i++) {
        apc_descriptor *d = member_at(descriptors, stride, i);
        if (d->struct_size < DESCRIPTOR_V1_SIZE || d->struct_size != stride)
            return fail(c, APC_EINVAL, 0, "descriptor %zu's struct_size is not that of the first, or smaller than version 1's", i);
        d->fd = -1;
        results[i] = APC_EDAEMON;
        if (paths[i] == NULL) return fail(c, APC_EINVAL, 0, "no member path at %zu", i);
    }
    if (flags & ~(APC_STANDALONE | APC_SHARED)) return fail(c, APC_EINVAL, 0, "unknown flags %#x", flags & ~(APC_STANDALONE | APC_SHARED));
    if (c->socket_path == NULL) return fail(c, APC_EINVAL, 0, "the handle is not connected (apc_connect_socket)");
    size_t pack_length = pack_id ? strlen(pack_id) : 0, body_length = pack_length + 2;
    for (size_t i = 0; i < count; i++) {
        size_t n = strlen(paths[i]);
        if (n > UINT16_MAX || body_length + 2 + n > MAX_REQUEST_BODY)
            return fail(c, APC_EREQUESTTOOLARGE, 0, "a batch of %zu members is longer than the %d bytes the daemon reads", count, MAX_REQUEST_BODY);
        body_length += 2 + n;
    }
    unsigned char *q = c->request;
    bool valid_strings = valid_utf8((const unsigned char *)(pack_id ? pack_id : ""), pack_length);
    for (size_t i = 0; valid_strings && i < count; i++) valid_strings = valid_utf8((const unsigned char *)paths[i], strlen(paths[i]));
    put_header(c, q, KIND_BATCH, body_length, flags, pack_length, valid_strings);
    unsigned char *at = q + HEADER_SIZE;
    if (pack_length) memcpy(at, pack_id, pack_length);
    at += pack_length;
    put16(at, (uint16_t)count);
    at += 2;
    for (size_t i = 0; i < count; i++) {
        size_t n = strlen(paths[i]);
        put16(at, (uint16_t)n);
        memcpy(at + 2, paths[i], n);
        at += 2 + n;
    }
    size_t request_size = HEADER_SIZE + body_length;

    int64_t deadline = deadline_after(c->timeout_ms);
    bool reconnected = false;
    for (;;) {
        bool fresh = c->sock < 0;
        int rc = fresh ? open_connection(c, deadline) : APC_OK;
        if (rc != APC_OK) return rc;
        size_t answered = 0;
        bool retry = false;
        while (answered < count) {
            int fd = -1;
            uint16_t status = 0;
            size_t body = 0;
            outcome o = answered == 0 ? exchange(c, request_size, &fd, &status, &body, deadline)
                                      : receive_reply(c, &fd, &status, &body, deadline);
            if (answered == 0 && refused_shared(c, o, fd, status)) {
                /* Once more without the flag: a daemon may know batches and not it. */
                retry = true;
                break;
            }
            if (o == OUTCOME_FAILURE && answered == 0 && fd < 0 && (status == STATUS_MALFORMED || status == STATUS_TOO_LARGE)) {
                /* The batch refused whole: by a daemon that predates batches
                 * ("unknown request kind 3", then it closes the connection). */
                disconnect(c);
                clear_error(c);
                return request_singly(c, pack_id, paths, count, flags, descriptors, stride, results);
            }
            if (o == OUTCOME_DESCRIPTOR || o == OUTCOME_FAILURE) {
                int member_rc = member_result(c, o, fd, status, body, member_at(descriptors, stride, answered));
                if (member_rc == APC_EDAEMON && c->sock < 0) goto broken;
                results[answered++] = member_rc;
                continue;
            }
            if (fd >= 0) close(fd);
            disconnect(c);
            if (o == OUTCOME_CLOSED_EARLY && answered == 0 && !fresh && !reconnected) {
                /* A daemon that restarted or closed an idle connection: ask once more. */
                reconnected = true;
                retry = true;
                break;
            }
            if (o == OUTCOME_CLOSED_EARLY) unavailable(c, ECONNRESET, "read reply: the daemon closed the connection");
            goto broken;
        }
        if (retry) continue;
        return APC_OK;
    broken:
        close_members(descriptors, stride, count);
        for (size_t j = 0; j < count; j++) results[j] = APC_EDAEMON;
        return APC_EDAEMON;
    }
}
