/** @file assetpacks-client.h
 *  @brief libassetpacks-client: asset descriptors from an AssetPacks descriptor daemon.
 *
 *  A process that may not open an AssetPacks container itself (a sandboxed
 *  helper, a process of another user) asks the container's descriptor daemon
 *  (`assetpack daemon`) for a member and gets back a read-only file
 *  descriptor with the offset and length of the member's bytes in it:
 *
 *  @code
 *  apc_client *c;
 *  apc_descriptor d = APC_DESCRIPTOR_INIT;
 *  int rc = apc_create(&c);
 *  if (rc == 0) rc = apc_connect_container(c, "/srv/game/container");
 *  if (rc == 0) rc = apc_request(c, "levels", "Levels/1.json", 0, &d);
 *  if (rc == 0) {
 *      ... pread(d.fd, buf, d.length, d.offset) ...
 *      close(d.fd);
 *  } else {
 *      fprintf(stderr, "%s\n", c ? apc_message(c) : apc_strerror(rc));
 *  }
 *  apc_close(c);
 *  @endcode
 *
 *  The library is plain C11 over the C library alone: no Swift runtime, no
 *  other dependency. It speaks version 1 of the daemon's wire protocol
 *  (docs/daemon-protocol.md in the AssetPacks sources), over the Unix stream
 *  socket `<container>/daemon.sock`, with descriptors passed by `SCM_RIGHTS`.
 *
 *  @par Errors
 *  Every function that can fail returns 0 on success and a negative `APC_*`
 *  code on failure. The codes are the negated `AssetPackError.Code` values of
 *  the Swift API — the statuses the daemon sends — and are named as in
 *  libassetpacks: `APC_ENOFILE` (-2) here is `AP_ENOFILE` there and
 *  `fileNotFound` (2) in Swift. The one the client alone reports, `APC_EINVAL`,
 *  is -100, as `AP_EINVAL`, and never travels on the wire. After a failure on
 *  a handle, apc_message() is one line a person can act on (the daemon's own
 *  message when the daemon answered), apc_error_number() the `errno` behind
 *  it, and apc_error_field() the fields the daemon sent with it (the pack,
 *  the path, ...).
 *
 *  @par Ownership
 *  The caller owns every descriptor the library returns (apc_descriptor.fd)
 *  and closes it with close(2); it stays valid after apc_close() and after
 *  the pack is updated or removed. A handle owns its socket and its error
 *  details; apc_close() releases them. A descriptor received with a reply
 *  that breaks the protocol is closed by the library, never leaked.
 *
 *  @par Thread safety
 *  A handle may be used by one thread at a time; threads that share one must
 *  take turns (a mutex around each call), or use a handle each. Separate
 *  handles are independent. apc_strerror() and apc_version() may be called
 *  from any thread at any time. The library keeps no global state, installs
 *  no signal handler, and never raises SIGPIPE (sends use MSG_NOSIGNAL).
 *  Calls interrupted by a signal (EINTR) are resumed within the handle's
 *  timeout.
 *
 *  @par ABI
 *  The handle is opaque. The one structure, apc_descriptor, begins with its
 *  own size, set by the caller (APC_DESCRIPTOR_INIT does it); a later version
 *  of the library appends fields and fills only those that the caller's size
 *  covers. The soname is `libassetpacks-client.so.1`; the major version
 *  changes only when an existing function or constant changes meaning.
 *  pkg-config name: `assetpacks-client`.
 */
#ifndef ASSETPACKS_CLIENT_H
#define ASSETPACKS_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && defined(APC_BUILDING_LIBRARY)
#define APC_API __attribute__((visibility("default")))
#else
#define APC_API
#endif

/** @defgroup version Version
 *  @{ */
/** The library's major version: changes only with an incompatible change (and the soname with it). */
#define APC_VERSION_MAJOR 1
/** The library's minor version: new functions, constants or fields. */
#define APC_VERSION_MINOR 3
/** The library's patch version: fixes only. */
#define APC_VERSION_PATCH 0
/** The version as a string, "MAJOR.MINOR.PATCH". */
#define APC_VERSION_STRING "1.3.0"
/** The version of the daemon's wire protocol this library speaks. */
#define APC_PROTOCOL_VERSION 1

/** @brief The version of the library in use (which may be newer than the header's).
 *
 *  @param[out] major  the major version, or NULL.
 *  @param[out] minor  the minor version, or NULL.
 *  @param[out] patch  the patch version, or NULL.
 *  @return the version as a static string, "MAJOR.MINOR.PATCH".
 *  Thread-safe. */
APC_API const char *apc_version(int *major, int *minor, int *patch);
/** @} */

/** @defgroup errors Error codes
 *
 *  0 is success; every failure is one of these negative values. Codes
 *  -1 ... -99 are the negated statuses of the daemon (`AssetPackError.Code`
 *  in the Swift API, one table for the Swift API, the wire and the C
 *  libraries); the fields listed are what apc_error_field() returns, in order.
 *  @{ */
/** Success. */
#define APC_OK 0
/** No pack with this ID is installed. Fields: the pack ID. */
#define APC_ENOPACK (-1)
/** No member at this path. Fields: the path, then the pack when one was named. */
#define APC_ENOFILE (-2)
/** A lookup without a pack ID matched members of several packs. Fields: the path, then each pack. */
#define APC_EAMBIGUOUS (-3)
/** A pack ID that no pack may have. Fields: the ID, the reason (apc_error_reason()). */
#define APC_EPACKID (-4)
/** A member path the container's index cannot hold. Fields: the path, the reason. */
#define APC_EPATH (-5)
/** A record in the container's index is damaged. Fields: the pack, the reason, and the member when known. */
#define APC_ECORRUPT (-6)
/** The archive an installed pack's record names is gone. Fields: the pack, the archive's path. */
#define APC_EARCHIVEMISSING (-7)
/** A pack file is malformed or its data damaged. Fields: the archive, the member (empty when none), the reason. */
#define APC_EBADARCHIVE (-8)
/** A system call failed in the daemon; apc_error_number() is its errno. Fields: the path, when known.
 *  Also memory running out in this process (ENOMEM, no fields). */
#define APC_ESYSTEM (-9)
/** The container's index (LMDB) failed in the daemon; apc_error_number() is LMDB's code. Fields: the path, when known. */
#define APC_EINDEX (-10)
/** No daemon could be reached at the socket, the connection broke, no answer
 *  came within the timeout, or the reply broke the protocol.
 *  apc_error_number() says which: ENOENT or ECONNREFUSED (no daemon), EACCES
 *  (the socket may not be reached), ENAMETOOLONG (the socket's path is longer
 *  than a Unix socket address holds), ECONNRESET (the connection broke),
 *  ETIMEDOUT (no answer in time), EPROTO (a malformed reply), or what socket(2)
 *  failed with (EMFILE, ...). No fields. */
#define APC_EDAEMON (-23)
/** A member is larger (or more compressed) than the container's limits allow.
 *  Fields: the archive, the member (empty when none), the reason, the pack (empty when none). */
#define APC_ELIMIT (-24)
/** The daemon refused this process (its uid and gid, checked with SO_PEERCRED). No fields. */
#define APC_EPEER (-64)
/** The daemon found the request malformed (a member path that is not UTF-8, for one). No fields. */
#define APC_EREQUEST (-65)
/** The request is longer than the daemon reads (pack ID and path over 8192 bytes); the
 *  library refuses it before sending. No fields. */
#define APC_EREQUESTTOOLARGE (-66)
/** The daemon speaks another protocol version. No fields. */
#define APC_EPROTOCOL (-67)
/** The daemon has no room for the connection or request (too many connections, or the
 *  user's memory-file budget is spent); try again later. No fields. */
#define APC_EBUSY (-68)
/** The daemon failed in a way that has no code of its own, or answered with a status
 *  this library does not know (apc_error_status() gives it). Fields: as the daemon sent them. */
#define APC_EDAEMONFAILED (-69)
/** The daemon serves this process but does not permit it this request (since 1.3):
 *  its user is not the container's owner, and the request is one only the owner may
 *  make, or names what the owner did not configure (a download from a catalog source
 *  the owner did not add; docs/daemon-protocol.md, "Who may ask for what").
 *  Fields: the pack (empty when none), the path (a catalog's URL; empty when none),
 *  the reason (apc_error_reason(): 870 a source not configured, 871 an unsigned catalog,
 *  873 a configured source's URL and key asked for another channel than the configured one). */
#define APC_ENOTPERMITTED (-70)
/** Client only: a NULL handle, path or output, a timeout below -1, unknown flags, or a
 *  request on a handle that was never connected. Nothing was sent. */
#define APC_EINVAL (-100)

/** @brief A static, one-line English description of an error code.
 *
 *  @param code  0 or a negative `APC_*` code; any other value gives
 *               "unknown error code".
 *  @return a string that lives as long as the library is loaded. Thread-safe. */
APC_API const char *apc_strerror(int code);
/** @} */

/** @defgroup client Connecting
 *  @{ */

/** An open handle on a descriptor daemon: its socket path, a connection, and the
 *  details of the last error. Opaque. */
typedef struct apc_client apc_client;

/** The timeout a new handle has: 10 seconds. */
#define APC_DEFAULT_TIMEOUT_MS 10000
/** A timeout value meaning "wait as long as it takes". */
#define APC_NO_TIMEOUT (-1)

/** @brief Makes a handle that is not yet connected.
 *
 *  @param[out] client  the new handle, or NULL on failure. Release it with apc_close().
 *  @return 0; APC_EINVAL when @p client is NULL; APC_ESYSTEM when memory
 *          runs out. */
APC_API int apc_create(apc_client **client);

/** @brief Sets how long one call may wait for the daemon.
 *
 *  Bounds the whole of apc_connect_socket() and each apc_request(): connecting,
 *  sending the request and receiving the reply, including a reconnection.
 *  @param client  the handle.
 *  @param milliseconds  1 or more, or APC_NO_TIMEOUT.
 *  @return 0, or APC_EINVAL. */
APC_API int apc_set_timeout(apc_client *client, int milliseconds);

/** @brief Connects to the daemon listening at the Unix socket @p socket_path.
 *
 *  Remembers the path: a later request whose connection the daemon had closed
 *  (it restarted, or the connection sat idle) reconnects once by itself, and
 *  after a failed connect a request connects anew (a daemon that was not yet
 *  up may be by then). Connecting a handle that is connected closes its old
 *  connection first.
 *  @param client  the handle.
 *  @param socket_path  the socket's path, shorter than 108 bytes (sun_path).
 *  @return 0; APC_EDAEMON when no daemon listens there (errno
 *          ENOENT, ECONNREFUSED), the socket may not be reached (EACCES), the
 *          path is too long (ENAMETOOLONG) or the time ran out (ETIMEDOUT);
 *          APC_ESYSTEM (ENOMEM) when memory runs out; APC_EINVAL. */
APC_API int apc_connect_socket(apc_client *client, const char *socket_path);

/** @brief Connects to the daemon serving the container at @p container_path:
 *  apc_connect_socket() with `<container_path>/daemon.sock`.
 *  @return as apc_connect_socket(). */
APC_API int apc_connect_container(apc_client *client, const char *container_path);

/** @brief Closes the handle's connection and frees it. Descriptors already
 *  returned stay open (they are the caller's). NULL is ignored. */
APC_API void apc_close(apc_client *client);
/** @} */

/** @defgroup request Asking for a member
 *  @{ */

/** Request flag: a standalone descriptor — a sealed memory file holding exactly
 *  the member, offset 0 — even for a stored member. */
#define APC_STANDALONE 1u

/** Request flag (since 1.2): a stored member's descriptor may share its open file
 *  description — and so its file position and its F_SETFL flags — with this handle's
 *  other descriptors of the same archive. The daemon then keeps one open description
 *  per archive for the handle's connection, so that a handout opens, duplicates and
 *  closes nothing there; its file position is set to the member's start when it is
 *  handed out. It is never shared with another
 *  handle or process, and memory files never are. A daemon that predates the flag is
 *  asked again without it (and the handle no longer sends it there); one with no
 *  descriptor room left for it answers as without it. Read with pread(2) or mmap(2).
 *  The handle keeps its own descriptor of each such description (at most 4, closed
 *  with the connection), so that the daemon passes each once; later handouts of the
 *  same archive are the library's own dup and lseek of it. */
#define APC_SHARED 2u

/** The descriptor's file is the pack's archive; the member's bytes lie at offset. */
#define APC_SOURCE_ARCHIVE 0
/** The descriptor's file is a sealed memory file of the daemon's (a deflated member,
 *  or any member asked for with APC_STANDALONE); offset is 0. */
#define APC_SOURCE_MEMORY 1

/** What apc_request() returns. Set @c struct_size before the call (APC_DESCRIPTOR_INIT
 *  does it); the library fills only the fields that lie within it. */
typedef struct apc_descriptor {
    /** Set by the caller: sizeof(apc_descriptor) as the caller was compiled. */
    size_t struct_size;
    /** A read-only descriptor, close-on-exec, owned by the caller; -1 when the request failed.
     *  Its file position is not to be relied on (with APC_SHARED another handout moves
     *  it): read with pread(2) or map it with mmap(2). */
    int fd;
    /** APC_SOURCE_ARCHIVE or APC_SOURCE_MEMORY. */
    int source;
    /** Where the member's bytes begin in the file. */
    int64_t offset;
    /** How many bytes the member has. */
    int64_t length;
    /** The size of the file behind @c fd (offset + length <= size). */
    int64_t file_size;
    /** The CRC-32 (ISO-HDLC, as ZIP) that the member's bytes have. */
    uint32_t crc32;
} apc_descriptor;

/** An initializer of an apc_descriptor ready to be passed to apc_request():
 *  `apc_descriptor d = APC_DESCRIPTOR_INIT;` (C and C++). */
#define APC_DESCRIPTOR_INIT {sizeof(apc_descriptor), -1, 0, 0, 0, 0, 0}

/** @brief Asks the daemon for the member at @p path, in pack @p pack_id or in
 *  whichever installed pack holds it.
 *
 *  Sends one request on the handle's connection and waits, up to the handle's
 *  timeout, for its reply. A stored member comes as the pack's archive with
 *  the member's offset and length; a deflated one (or any, with
 *  APC_STANDALONE) as a sealed memory file with offset 0. When the daemon had
 *  closed the connection before answering, the request is sent once more on
 *  a new connection (requests are idempotent). After a broken connection, a
 *  timeout or a malformed reply, the connection is closed and the next
 *  request reconnects.
 *
 *  @param client   a handle connected with apc_connect_socket() or apc_connect_container().
 *  @param pack_id  the pack to look in (UTF-8), or NULL or "" to search every installed pack.
 *  @param path     the member's path in the pack (UTF-8, '/' separated).
 *  @param flags    0, or APC_STANDALONE, APC_SHARED or both.
 *  @param[in,out] descriptor  @c struct_size set by the caller; filled on success,
 *                  @c fd set to -1 on failure.
 *  @return 0, and the caller owns @c descriptor->fd; or APC_ENOPACK,
 *          APC_ENOFILE, APC_EAMBIGUOUS, APC_EPACKID, APC_EPATH,
 *          APC_ECORRUPT, APC_EARCHIVEMISSING, APC_EBADARCHIVE, APC_ELIMIT,
 *          APC_ESYSTEM, APC_EINDEX as the daemon met them; a refusal (APC_EPEER,
 *          APC_EREQUEST, APC_EREQUESTTOOLARGE, APC_EPROTOCOL,
 *          APC_EBUSY, APC_EDAEMONFAILED); APC_EDAEMON;
 *          APC_EINVAL (no path or descriptor, unknown flags, a @c struct_size
 *          smaller than version 1's apc_descriptor, a handle never connected). */
APC_API int apc_request(apc_client *client, const char *pack_id, const char *path, unsigned flags,
                        apc_descriptor *descriptor);

/** The most members one apc_request_batch() may ask for. */
#define APC_MAX_BATCH 64

/** @brief Asks the daemon for @p count members in one round trip (since 1.1):
 *  each at @p paths[i], in pack @p pack_id or in whichever installed pack
 *  holds it, as apc_request() would for each alone.
 *
 *  The daemon answers every member in order, each with its descriptor or its
 *  own error: a member that is not found does not keep the others from
 *  coming. A daemon that predates batches is asked member by member (the
 *  call then takes @p count round trips). When the daemon had closed the
 *  connection before answering, the batch is sent once more on a new
 *  connection; the handle's timeout bounds the whole call.
 *
 *  @param client   a connected handle.
 *  @param pack_id  the pack to look in, or NULL or "" to search every installed pack.
 *  @param paths    @p count member paths (UTF-8).
 *  @param count    1 to APC_MAX_BATCH.
 *  @param flags    0, or APC_STANDALONE, APC_SHARED or both (for every member).
 *  @param[in,out] descriptors  an array of @p count apc_descriptor, each with @c struct_size
 *                  set (APC_DESCRIPTOR_INIT); member i's is filled when results[i] is 0,
 *                  and its @c fd is -1 otherwise.
 *  @param[out] results  @p count codes: 0, and the caller owns descriptors[i].fd; or that
 *                  member's error (APC_ENOFILE, APC_EPATH, APC_EBUSY, ... as apc_request()).
 *  @return 0 when every member was answered (look at @p results; the handle's error details
 *          then describe the last member that failed); or, with no descriptor kept:
 *          APC_EINVAL (no paths, descriptors or results, a count of 0 or above
 *          APC_MAX_BATCH, unknown flags, struct_size not set alike, a handle never
 *          connected), APC_EREQUESTTOOLARGE (the pack ID and paths over the 8192
 *          bytes the daemon reads in a request), a refusal of the connection
 *          (APC_EPEER, APC_EBUSY), APC_EDAEMON. */
APC_API int apc_request_batch(apc_client *client, const char *pack_id, const char *const *paths, size_t count,
                              unsigned flags, apc_descriptor *descriptors, int *results);
/** @} */

/** @defgroup details The last error's details
 *
 *  After a call on a handle fails, these describe the failure until the next
 *  call on the handle (the strings are the handle's; copy them to keep them).
 *  After a success they describe no error ("", 0, no fields).
 *  @{ */

/** @brief One line about the last error: the daemon's message when the daemon
 *  answered (prefixed with "descriptor daemon at <socket> refused the request: "
 *  for refusals), else what failed and why. For an error the daemon sent, the
 *  text is the Swift client's `AssetPackError.message` for it. Never NULL. */
APC_API const char *apc_message(const apc_client *client);

/** @brief The `errno` behind the last error (ENOENT, ETIMEDOUT, EPROTO, ... for
 *  APC_EDAEMON; the daemon's errno or LMDB code for APC_ESYSTEM and
 *  APC_EINDEX), or 0. */
APC_API int apc_error_number(const apc_client *client);

/** @brief The status the daemon answered with (the positive code), or 0 when the
 *  last error did not come from the daemon. */
APC_API int apc_error_status(const apc_client *client);

/** @brief How many fields the daemon sent with the last error (the message not
 *  counted); see each code for what they are. */
APC_API int apc_error_field_count(const apc_client *client);

/** @brief Field @p index (from 0) of the last error, as a NUL-terminated UTF-8
 *  string, or NULL when there is no such field. */
APC_API const char *apc_error_field(const apc_client *client, int index);

/** @brief The reason of the last error (an `AssetPackError.Reason` value, such as
 *  102 "bad first character" for APC_EPACKID), or 0 when it has none. */
APC_API int apc_error_reason(const apc_client *client);
/** @} */

#ifdef __cplusplus
}
#endif

#endif /* ASSETPACKS_CLIENT_H */
