/*
 * assetpacks.h — libassetpacks, the C API of AssetPacks.
 *
 * AssetPacks is an embedded store for asset packs on Linux: ZIP archives
 * installed atomically into a *group container* (a directory shared by
 * cooperating processes) and read back zero-copy, or as file descriptors.
 * This library is the store for C and C++ programs; it is a thin layer over
 * the Swift engine and sees exactly what the Swift API and the `assetpack`
 * command line see.
 *
 *     #include <assetpacks.h>
 *
 *     ap_container *c;
 *     int rc = ap_open("/var/lib/game/assets", AP_OPEN_READONLY, &c);
 *     if (rc != AP_OK) { fprintf(stderr, "%s\n", ap_last_error_message()); return 1; }
 *     const void *bytes; size_t size; ap_data *held;
 *     rc = ap_read(c, "base", "Levels/1.json", &bytes, &size, &held);
 *     if (rc == AP_OK) { parse(bytes, size); ap_release(held); }
 *     ap_close(c);
 *
 * Build and link with `cc game.c $(pkg-config --cflags --libs assetpacks)`.
 *
 * CONVENTIONS
 *
 * Return values. Every function that can fail returns an `int`: `AP_OK` (0)
 * on success, or one of the negative `AP_E...` codes below. Iterators'
 * `_next` functions return 1 when they produced an item and 0 at the end.
 * Output parameters are written only on success, unless a function says
 * otherwise.
 *
 * Error details. A failed call also records, for the calling thread only,
 * a one-line message naming the pack, member or path concerned
 * (`ap_last_error_message`), with the code, the refining reason, the pack,
 * member and path and the `errno` where there is one. A successful call does
 * not clear them. The strings stay valid until the next failing call on the
 * same thread.
 *
 * Strings. Every string passed in is UTF-8 and NUL-terminated; pack IDs and
 * member paths are those of the Swift API (`Levels/1.json`, no leading
 * slash). A pack ID of NULL, where allowed, means "search every installed
 * pack" (the path must then be in exactly one). Strings handed out belong to
 * the library; each function says how long they stay valid.
 *
 * Ownership. Handles (`ap_container`, `ap_data`, `ap_packs`, `ap_members`)
 * are opaque; each has one function that frees it, which accepts NULL.
 * A file descriptor handed out (`ap_get_descriptor`) belongs to the caller,
 * who closes it with close(2).
 *
 * Structures. The few structures the library fills begin with a
 * `struct_size` field the caller sets to `sizeof` the structure before the
 * call; later versions only append fields and fill only as much as the
 * caller's `struct_size` says, so a program built against this header keeps
 * working with newer libraries. A `struct_size` smaller than this version's
 * structure is `AP_EINVAL`.
 *
 * Threads. An `ap_container` may be used by any number of threads at once:
 * reads take no lock (each runs in its own index snapshot); installs and
 * removals serialize themselves, also against other processes. `ap_data`
 * handles may be released on any thread. An iterator (`ap_packs`,
 * `ap_members`) must not be used by two threads at once. Do not close a
 * container while another thread is still using it; `ap_data` handles and
 * descriptors obtained from it stay valid after `ap_close`.
 *
 * Processes. Several processes may open the same container; they see each
 * other's installs and removals. A handle must not be used in a child after
 * fork(2); open the container again there.
 *
 * Stability. This header is the ABI: opaque handles, integers, strings and
 * size-prefixed structures only. Constants keep their values for ever;
 * functions are only added. `AP_VERSION_MAJOR` changes only if that promise
 * is ever broken.
 */
#ifndef ASSETPACKS_H
#define ASSETPACKS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Version                                                                   */

/** The version of this header. `ap_version()` tells that of the library. */
#define AP_VERSION_MAJOR 1
#define AP_VERSION_MINOR 3
#define AP_VERSION_PATCH 0
/** The version as one number, for `#if AP_VERSION >= AP_VERSION_NUMBER(1, 1, 0)`. */
#define AP_VERSION_NUMBER(major, minor, patch) (((major) << 16) | ((minor) << 8) | (patch))
#define AP_VERSION AP_VERSION_NUMBER(AP_VERSION_MAJOR, AP_VERSION_MINOR, AP_VERSION_PATCH)
#define AP_VERSION_STRING "1.3.0"

/**
 * The library's version.
 *
 * @param[out] major, minor, patch  where to store the parts; each may be NULL.
 * @return  the version as text ("1.3.0"), a static string.
 * Thread-safe; never fails.
 */
const char *ap_version(int *major, int *minor, int *patch);

/* ------------------------------------------------------------------------ */
/* Result codes                                                              */
/*
 * The negative of the Swift API's `AssetPackError.Code`, one to one, plus a
 * few of the C layer's own (from -100 on). `ap_strerror` names each.
 */

#define AP_OK 0

/** No pack with this ID is installed. */
#define AP_ENOPACK (-1)
/** No member at this path (in the pack named, or in any). */
#define AP_ENOFILE (-2)
/** A path-only lookup (pack NULL) found the path in several packs. */
#define AP_EAMBIGUOUS (-3)
/** A pack ID no pack may have, or one that disagrees with the pack file. */
#define AP_EPACKID (-4)
/** A member path the index cannot hold. */
#define AP_EPATH (-5)
/** A record in the container's index is damaged. */
#define AP_ECORRUPT (-6)
/** The archive an installed pack's record names is gone. */
#define AP_EARCHIVEMISSING (-7)
/** A pack file is malformed, or a member's data is damaged (CRC, inflate). */
#define AP_EBADARCHIVE (-8)
/** A system call failed; `ap_last_error_errno()` has the errno. */
#define AP_ESYSTEM (-9)
/** The container's index (LMDB) failed; `ap_last_error_errno()` has LMDB's code. */
#define AP_EINDEX (-10)
/** A manifest is invalid. */
#define AP_EMANIFEST (-16)
/** A pack file's recorded manifest is unreadable. */
#define AP_ERECORDEDMANIFEST (-17)
/** A pack's lock could not be taken in time. */
#define AP_ELOCKTIMEOUT (-18)
/** The file given to install is not a regular file. */
#define AP_ENOTAFILE (-19)
/** There is no container at the path and the open did not ask to create one. */
#define AP_ENOCONTAINER (-20)
/** The container's index was written by an incompatible version. */
#define AP_ESCHEMA (-21)
/** A URL this build cannot install from. */
#define AP_EURL (-22)
/** The descriptor daemon cannot be reached, or the connection broke. */
#define AP_EDAEMON (-23)
/** A member or pack declares more than the container's limits allow. */
#define AP_ELIMIT (-24)
/** A symlink is where a file or directory of the container belongs. */
#define AP_ESYMLINK (-25)
/** An option (of the Swift API's `AssetPackManager.Options`) is out of range. */
#define AP_EOPTION (-26)
/** A catalog is not valid. */
#define AP_ECATALOG (-32)
/** A catalog's format is not one this version reads. */
#define AP_ECATALOGFORMAT (-33)
/** A key is configured and the catalog has no signature. */
#define AP_EUNSIGNED (-34)
/** The catalog is signed, but not by the configured key. */
#define AP_EKEYMISMATCH (-35)
/** A catalog's signature does not verify, or is malformed. */
#define AP_ESIGNATURE (-36)
/** The catalog is older than one already accepted. */
#define AP_EROLLBACK (-37)
/** The catalog has expired. */
#define AP_EEXPIRED (-38)
/** A key file or key text is malformed. */
#define AP_EKEY (-39)
/** The persisted trust state is damaged. */
#define AP_ETRUSTSTATE (-40)
/** A publish was refused. */
#define AP_EPUBLISH (-41)
/** The catalog is of another channel than the one asked for, or names none. Since 1.3.0. */
#define AP_ECHANNEL (-42)
/** A pack download was answered 404 or 410. */
#define AP_EDLNOTFOUND (-48)
/** A pack download was refused (403, another 4xx). */
#define AP_EDLREFUSED (-49)
/** A downloaded pack is not the catalog's size. */
#define AP_EDLSIZE (-50)
/** A downloaded pack's SHA-256 is not the catalog's. */
#define AP_EDLCHECKSUM (-51)
/** A pack download kept failing transiently through every attempt. */
#define AP_EDLRETRIES (-52)
/** A pack download failed in a way retrying does not mend. */
#define AP_EDLFAILED (-53)
/** The catalog could not be fetched and no cached copy answers for it. */
#define AP_ECATALOGUNAVAILABLE (-54)
/** A pack download was cancelled. */
#define AP_EDLCANCELLED (-55)
/** No download is running for the pack named. */
#define AP_ENODOWNLOAD (-56)
/** A pack download or catalog fetch ran out of time (minimum speed or total deadline). Since 1.3.0. */
#define AP_EDLTIMEDOUT (-57)
/** The CA file cannot be used (not a regular file, too large, unreadable). Since 1.3.0. */
#define AP_ECAFILE (-58)
/** A pack's file cannot fit: more than the free space, or than the process may write. Since 1.3.0. */
#define AP_EDLTOOLARGE (-59)
/** A pack's piece map is unusable (updates then download the whole pack). */
#define AP_EPIECEMAP (-60)
/** The daemon refused this process. */
#define AP_EPEER (-64)
/** The daemon found the request malformed. */
#define AP_EREQUEST (-65)
/** The request was longer than the daemon reads. */
#define AP_EREQUESTTOOLARGE (-66)
/** The daemon speaks another protocol version. */
#define AP_EPROTOCOL (-67)
/** The daemon serves as many connections as it may. */
#define AP_EBUSY (-68)
/** The daemon failed in a way that has no code of its own. */
#define AP_EDAEMONFAILED (-69)
/** This process may not make the request: a download from a catalog source
 *  the container's owner did not configure, asked of the daemon by another
 *  user; a pause, resume or cancel of a download another user runs. Since 1.2.0. */
#define AP_ENOTPERMITTED (-70)

/* The C layer's own. */

/** An argument is invalid: a required pointer is NULL, a string is not
 *  UTF-8, unknown flags, a `struct_size` too small. */
#define AP_EINVAL (-100)
/** `ap_copy`: the buffer is smaller than the member (`*size` tells how big). */
#define AP_ERANGE (-101)
/** A change (install, remove, repair) through a container opened read-only. */
#define AP_EREADONLY (-102)

/**
 * A short description of a result code ("no such pack"), a static string;
 * "unknown error" for a number that is no code. Thread-safe.
 */
const char *ap_strerror(int code);

/** The calling thread's last error: its one-line message, naming the pack,
 *  member or path ("" before any error). Valid until the thread's next
 *  failing call. */
const char *ap_last_error_message(void);
/** The last error's code (`AP_E...`), `AP_OK` before any error. */
int ap_last_error_code(void);
/** The last error's reason: the Swift API's `AssetPackError.Reason` number
 *  (412 for a CRC mismatch, 0 when the code says all there is). */
int ap_last_error_reason(void);
/** The `errno` of `AP_ESYSTEM` and `AP_EDAEMON`, LMDB's code for
 *  `AP_EINDEX`; 0 otherwise. */
int ap_last_error_errno(void);
/** The pack, member path, and file path the last error concerns, or NULL
 *  where it concerns none. Valid until the thread's next failing call. */
const char *ap_last_error_pack(void);
const char *ap_last_error_member(void);
const char *ap_last_error_path(void);

/* ------------------------------------------------------------------------ */
/* Containers                                                                */

/** An open group container. Opaque. */
typedef struct ap_container ap_container;

/** `ap_open` flags. */
/** Read only (the default, 0): the container must exist; changes are `AP_EREADONLY`. */
#define AP_OPEN_READONLY 0x0u
/** Read and write: `ap_install`, `ap_remove`, `ap_verify` with repair. */
#define AP_OPEN_READWRITE 0x1u
/** With `AP_OPEN_READWRITE`: create the container if it is missing. */
#define AP_OPEN_CREATE 0x2u

/**
 * Opens the container at `path`.
 *
 * @param path   the container directory (relative to the working directory,
 *               or absolute).
 * @param flags  `AP_OPEN_READONLY`, or `AP_OPEN_READWRITE` optionally with
 *               `AP_OPEN_CREATE`.
 * @param[out] container  the new handle, freed with `ap_close`.
 * @return `AP_OK`; `AP_ENOCONTAINER` when it is missing (and not to be
 *         created); `AP_ESCHEMA`; `AP_EINDEX`; `AP_ESYMLINK`; `AP_ESYSTEM`;
 *         `AP_EINVAL` for a NULL pointer or unknown flags.
 */
int ap_open(const char *path, unsigned int flags, ap_container **container);

/**
 * Opens the default container of group `group` (NULL: "default"):
 * `$XDG_DATA_HOME/assetpacks/<group>`, `XDG_DATA_HOME` defaulting to
 * `~/.local/share`; the environment variable `ASSETPACKS_CONTAINER`, when
 * set, wins. Otherwise as `ap_open`.
 */
int ap_open_group(const char *group, unsigned int flags, ap_container **container);

/**
 * Closes a container handle (NULL: nothing). Data handles and descriptors
 * obtained from it stay valid. No other thread may be using it.
 */
void ap_close(ap_container *container);

/** The container's directory, absolute; valid until `ap_close`. */
const char *ap_container_path(const ap_container *container);

/** `ap_set_lock_timeout`'s value for the default wait (any negative value is). */
#define AP_LOCK_TIMEOUT_DEFAULT (-1.0)

/**
 * Sets how long calls on `container` wait, from now on, for a lock another
 * process holds: a pack's (`ap_install`, `ap_remove`), the container's
 * (`ap_verify` with repair). Since 1.2.0.
 *
 * A lock held past the wait fails the call with `AP_ELOCKTIMEOUT`: the
 * message names the lock, its file (also `ap_last_error_path()`) and, where
 * this process can see it, the holder's pid — "timed out after 2 s waiting
 * for the pack lock of 'maps' (<container>/locks/packs/maps.lock), held by
 * pid 1234". Linux reports no pid for the open file description locks the
 * library takes, so the holder is found through `/proc/<pid>/fdinfo`: a
 * process of the same user is named, one of another user is not.
 *
 * @param seconds  wait at most this long, whoever holds the lock (0: do not
 *                 wait at all); or `AP_LOCK_TIMEOUT_DEFAULT`, the wait of a
 *                 new handle: for as long as the holder is a process of this
 *                 user that is not stopped (an install at work), and 10 s
 *                 while it is not (another user's process, a stopped one,
 *                 one not visible). The index's map-length lock, held while
 *                 a process maps the index (an instant), is waited for as the
 *                 first handle of the container in the process was opened.
 * @return `AP_OK`; `AP_EINVAL` for a NULL container or a NaN or infinite
 *         `seconds`.
 * Thread-safe; calls already waiting keep their wait.
 */
int ap_set_lock_timeout(ap_container *container, double seconds);

/* ------------------------------------------------------------------------ */
/* Reading                                                                   */

/** A member's bytes held for the caller (see `ap_read`). Opaque. */
typedef struct ap_data ap_data;

/**
 * Reads the member at `path` in pack `pack` (NULL: in whichever installed
 * pack holds it), without copying when it can.
 *
 * A stored member's bytes are not copied: `*data` points into a shared
 * read-only mapping of the installed archive. A deflated member is inflated
 * into memory of the handle's own, and its CRC-32 checked. Either way the
 * bytes stay valid and unchanged until `ap_release(*handle)` — also after
 * the pack is updated or removed, by this or another process, and after
 * `ap_close`. The bytes are read-only: writing to them is undefined
 * (a stored member's page is mapped read-only and faults). A stored member's
 * CRC-32 is not checked (that would touch every page): use `ap_copy` where
 * the bytes are copied anyway.
 *
 * @param[out] data    the first byte (not NULL, also for an empty member).
 * @param[out] size    the number of bytes.
 * @param[out] handle  what keeps them alive; release it exactly once.
 * @return `AP_OK`; `AP_ENOPACK`, `AP_ENOFILE`, `AP_EAMBIGUOUS`;
 *         `AP_EBADARCHIVE` when a deflated member's data is damaged (reason
 *         412 CRC mismatch, 414 corrupt data); `AP_ELIMIT` when a deflated
 *         member is over the container's limits; `AP_EARCHIVEMISSING`,
 *         `AP_ECORRUPT`; `AP_EINVAL`.
 * Thread-safe.
 */
int ap_read(ap_container *container, const char *pack, const char *path,
            const void **data, size_t *size, ap_data **handle);

/** Releases the bytes of `ap_read` (NULL: nothing). Any thread. */
void ap_release(ap_data *handle);

/**
 * Copies the member at `path` (in `pack`, or NULL: any) into `buffer`, with
 * its CRC-32 checked (stored members too).
 *
 * Ask for the size first with `buffer` NULL and `capacity` 0: `*size` is
 * set and `AP_OK` returned. With a buffer smaller than the member, nothing
 * is copied, `*size` is set to the member's size and `AP_ERANGE` returned.
 *
 * @param[out] size  the member's size (bytes copied on success).
 * @return `AP_OK`; `AP_ERANGE`; the errors of `ap_read`, and
 *         `AP_EBADARCHIVE` (reason 412) for a damaged stored member.
 * Thread-safe.
 */
int ap_copy(ap_container *container, const char *pack, const char *path,
            void *buffer, size_t capacity, size_t *size);

/** `ap_member_info.method`: the ZIP method numbers. */
#define AP_METHOD_STORED 0
#define AP_METHOD_DEFLATED 8

/** A member, as `ap_stat` and `ap_members_next` describe it. */
typedef struct ap_member_info {
    /** Set by the caller: sizeof(ap_member_info). */
    size_t struct_size;
    /** The pack that holds it. */
    const char *pack;
    /** Its path in the pack. */
    const char *path;
    /** Its size in bytes (what `ap_read` gives). */
    uint64_t size;
    /** Its size inside the archive. */
    uint64_t stored_size;
    /** `AP_METHOD_STORED` or `AP_METHOD_DEFLATED`. */
    int method;
    /** The CRC-32 (ZIP's) of its bytes. */
    uint32_t crc32;
} ap_member_info;

/**
 * Describes the member at `path` (in `pack`, or NULL: any) without reading
 * it. The strings in `*info` stay valid until the calling thread's next
 * `ap_stat`.
 *
 * @return `AP_OK`; `AP_ENOPACK`, `AP_ENOFILE`, `AP_EAMBIGUOUS`,
 *         `AP_ECORRUPT`; `AP_EINVAL` (also for a `struct_size` too small).
 * Thread-safe.
 */
int ap_stat(ap_container *container, const char *pack, const char *path, ap_member_info *info);

/* ------------------------------------------------------------------------ */
/* Descriptors                                                               */

/** `ap_descriptor_info.source`. */
/** A new open file description of the installed archive: the member is the
 *  range [offset, offset + length) of a file that goes on past it. */
#define AP_SOURCE_ARCHIVE 0
/** A sealed memfd holding exactly the member at offset 0. */
#define AP_SOURCE_MEMORY 1

/** `ap_get_descriptor` flags. */
/** Always a descriptor whose end is the member's end (a sealed memfd at
 *  offset 0), for consumers that read to end-of-file. */
#define AP_DESCRIPTOR_STANDALONE 0x1u

/** A member's file descriptor and byte range. */
typedef struct ap_descriptor_info {
    /** Set by the caller: sizeof(ap_descriptor_info). */
    size_t struct_size;
    /** Read-only, close-on-exec; the caller owns it and closes it. Its file
     *  position is at `offset`. */
    int fd;
    /** `AP_SOURCE_ARCHIVE` or `AP_SOURCE_MEMORY`. */
    int source;
    /** Where the member starts in the file. */
    int64_t offset;
    /** The member's length in bytes. */
    int64_t length;
    /** The CRC-32 the member's bytes must have. */
    uint32_t crc32;
} ap_descriptor_info;

/**
 * A read-only descriptor of the member at `path` (in `pack`, or NULL: any),
 * as Android's AssetFileDescriptor: a stored member comes as a descriptor of
 * the whole installed archive with the member's range (read it with
 * pread(2) or mmap(2) of the range, never to end-of-file); a deflated one,
 * or any with `AP_DESCRIPTOR_STANDALONE`, as a sealed memfd holding exactly
 * the member. The descriptor stays readable after the pack is updated or
 * removed.
 *
 * @param flags  0 or `AP_DESCRIPTOR_STANDALONE`.
 * @return `AP_OK`; the errors of `ap_read`; `AP_ESYSTEM` when no descriptor
 *         can be made (EMFILE, ...); `AP_EINVAL`.
 * Thread-safe.
 */
int ap_get_descriptor(ap_container *container, const char *pack, const char *path,
                      unsigned int flags, ap_descriptor_info *info);

/* ------------------------------------------------------------------------ */
/* Listing                                                                   */

/** An iterator over the installed packs. Opaque. */
typedef struct ap_packs ap_packs;
/** An iterator over one pack's members. Opaque. */
typedef struct ap_members ap_members;

/** An installed pack, as `ap_packs_next` describes it. */
typedef struct ap_pack_info {
    /** Set by the caller: sizeof(ap_pack_info). */
    size_t struct_size;
    /** The pack's ID. */
    const char *id;
    /** The catalog's version, or the local generation number. */
    const char *version;
    /** "essential", "prefetch" or "onDemand". */
    const char *download_policy;
    /** SHA-256 of the archive, 64 lowercase hex digits. */
    const char *sha256;
    /** Size of the archive on disk, in bytes. */
    uint64_t archive_size;
    /** Number of members. */
    uint64_t member_count;
    /** Sum of the members' sizes, in bytes. */
    uint64_t total_size;
    /** When it was installed, in seconds since the Unix epoch. */
    int64_t install_time;
} ap_pack_info;

/**
 * Starts a listing of the installed packs, sorted by ID, as one snapshot:
 * installs and removals after this call do not change it.
 *
 * @param[out] packs  the iterator, freed with `ap_packs_free`.
 * @return `AP_OK`; `AP_ECORRUPT`, `AP_EINDEX`; `AP_EINVAL`.
 */
int ap_packs_open(ap_container *container, ap_packs **packs);

/**
 * Describes the next pack in `*info`; its strings stay valid until the next
 * `ap_packs_next` or `ap_packs_free` on this iterator.
 *
 * @return 1 when `*info` was filled, 0 at the end; `AP_EINVAL`.
 */
int ap_packs_next(ap_packs *packs, ap_pack_info *info);

/** Frees the iterator (NULL: nothing). */
void ap_packs_free(ap_packs *packs);

/**
 * Starts a listing of pack `pack`'s members, sorted by path, as one
 * snapshot; with `directory` (not NULL), only those below it ("Levels" and
 * "Levels/" both mean everything under Levels/).
 *
 * @param[out] members  the iterator, freed with `ap_members_free`.
 * @return `AP_OK`; `AP_ENOPACK`; `AP_ECORRUPT`; `AP_EINVAL`.
 */
int ap_members_open(ap_container *container, const char *pack, const char *directory, ap_members **members);

/**
 * Describes the next member in `*info`; its strings stay valid until the
 * next `ap_members_next` or `ap_members_free` on this iterator.
 *
 * @return 1 when `*info` was filled, 0 at the end; `AP_EINVAL`.
 */
int ap_members_next(ap_members *members, ap_member_info *info);

/** Frees the iterator (NULL: nothing). */
void ap_members_free(ap_members *members);

/* ------------------------------------------------------------------------ */
/* Changing                                                                  */

/** `ap_install`'s `*change`. */
/** The pack was not installed before. */
#define AP_INSTALLED 0
/** An older (or other) version was replaced. */
#define AP_REPLACED 1
/** A byte-identical archive was installed already: nothing changed. */
#define AP_UNCHANGED 2

/**
 * Installs the pack file at `file`, replacing the installed version of the
 * same pack atomically. Readers, in this and other processes, see the old
 * version or the new one, never a mixture; bytes and descriptors of the old
 * version handed out before stay readable.
 *
 * @param id  the ID for a plain ZIP that records no manifest (NULL: the
 *            file name without its extension).
 * @param[out] change  `AP_INSTALLED`, `AP_REPLACED` or `AP_UNCHANGED`; may
 *            be NULL.
 * @return `AP_OK`; `AP_EREADONLY`; `AP_EBADARCHIVE` for a malformed or
 *         damaged file; `AP_ELIMIT`; `AP_ENOTAFILE`; `AP_EPACKID`;
 *         `AP_EPATH`; `AP_ELOCKTIMEOUT`; `AP_ESYSTEM` (ENOENT for a missing
 *         file); `AP_EINVAL`. Nothing installed changes on failure.
 * Thread-safe; blocks while another thread or process installs or removes
 * the same pack. `ap_install_flags` with `AP_INSTALL_BACKGROUND` installs at
 * background priority. A thread the caller lowered itself (nice 19, or
 * `SCHED_IDLE`) may also call `ap_install`: the install then does all its
 * work on that thread, handing none to a thread of the library's pool,
 * which would keep the priority.
 */
int ap_install(ap_container *container, const char *file, const char *id, int *change);

/** `ap_install_flags` flags. */
/** Install on a thread of the library's own at nice 19 (`SCHED_BATCH`):
 *  beside a thread of normal priority it gets about 1.5 % of a CPU and
 *  never preempts it on waking, so readers keep their CPUs; on an idle CPU
 *  it runs at full speed. The call waits for it; the calling thread's
 *  priority does not change. For updates nobody waits on. */
#define AP_INSTALL_BACKGROUND 0x1u

/**
 * `ap_install` with `flags`: 0 or `AP_INSTALL_BACKGROUND`. Since 1.1.0.
 *
 * @return as `ap_install`; `AP_EINVAL` also for unknown flags.
 */
int ap_install_flags(ap_container *container, const char *file, const char *id, unsigned int flags, int *change);

/**
 * Removes pack `pack` and frees its space. Bytes and descriptors already
 * handed out stay readable.
 *
 * @return `AP_OK`; `AP_EREADONLY`; `AP_ENOPACK`; `AP_ELOCKTIMEOUT`;
 *         `AP_EINVAL`.
 * Thread-safe.
 */
int ap_remove(ap_container *container, const char *pack);

/** `ap_verify` flags. */
/** Also check every archive's SHA-256 and every member's CRC-32. */
#define AP_VERIFY_DEEP 0x1u
/** Fix what can be fixed without losing installed data (read-write only). */
#define AP_VERIFY_REPAIR 0x2u
/** With `AP_VERIFY_REPAIR`: say what would be done, do nothing. */
#define AP_VERIFY_DRY_RUN 0x4u

/** `ap_finding.severity`. */
/** Unexpected but harmless. */
#define AP_SEVERITY_WARNING 0
/** Left behind by a crash, reclaimed by the next writer: not damage. */
#define AP_SEVERITY_RECLAIMABLE 1
/** Damage. */
#define AP_SEVERITY_ERROR 2

/** One finding of `ap_verify`. */
typedef struct ap_finding {
    /** sizeof(ap_finding) in this library; a callback reads only the fields
     *  its own header's structure has. */
    size_t struct_size;
    /** The stable finding code, as `assetpack verify` prints it
     *  ("member.crc-mismatch"); docs/verify.md lists them. */
    const char *code;
    /** `AP_SEVERITY_...`. */
    int severity;
    /** 1 for a finding still there after repair (a second pass), else 0. */
    int remaining;
    /** The pack it concerns, or NULL. */
    const char *pack;
    /** The member path or file name it concerns, or NULL. */
    const char *object;
    /** One line for people. */
    const char *message;
} ap_finding;

/** Called once per finding; the finding and its strings are valid only
 *  during the call. */
typedef void (*ap_finding_fn)(void *context, const ap_finding *finding);

/**
 * Checks the container like fsck; with `AP_VERIFY_REPAIR`, fixes what can
 * be fixed without losing installed data.
 *
 * @param flags     `AP_VERIFY_DEEP`, `AP_VERIFY_REPAIR`, `AP_VERIFY_DRY_RUN`.
 * @param callback  called for each finding (may be NULL), on the calling
 *                  thread, before `ap_verify` returns.
 * @return fsck's exit status, not negative: 0 no errors, 1 errors found and
 *         all corrected, 4 errors left uncorrected; or a negative code when
 *         the check itself could not run (`AP_ESYSTEM`, `AP_EINDEX`,
 *         `AP_ELOCKTIMEOUT`), `AP_EREADONLY` for a repair through a
 *         read-only container, `AP_EINVAL`.
 */
int ap_verify(ap_container *container, unsigned int flags, ap_finding_fn callback, void *context);

#ifdef __cplusplus
}
#endif

#endif /* ASSETPACKS_H */
