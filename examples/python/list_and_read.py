#!/usr/bin/env python3
"""list_and_read: libassetpacks from Python with ctypes, nothing to build.

    list_and_read.py CONTAINER              lists every pack and its members
    list_and_read.py CONTAINER PATH [PACK]  writes one member's bytes to stdout

The library is found as `libassetpacks.so` on the loader's path, or at
$ASSETPACKS_LIBRARY.
"""
import ctypes
import os
import sys

lib = ctypes.CDLL(os.environ.get("ASSETPACKS_LIBRARY", "libassetpacks.so"))

AP_OK = 0
AP_METHOD_DEFLATED = 8


class MemberInfo(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("pack", ctypes.c_char_p), ("path", ctypes.c_char_p),
                ("size", ctypes.c_uint64), ("stored_size", ctypes.c_uint64), ("method", ctypes.c_int),
                ("crc32", ctypes.c_uint32)]


class PackInfo(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("id", ctypes.c_char_p), ("version", ctypes.c_char_p),
                ("download_policy", ctypes.c_char_p), ("sha256", ctypes.c_char_p),
                ("archive_size", ctypes.c_uint64), ("member_count", ctypes.c_uint64),
                ("total_size", ctypes.c_uint64), ("install_time", ctypes.c_int64)]


handle = ctypes.c_void_p
lib.ap_open.argtypes = [ctypes.c_char_p, ctypes.c_uint, ctypes.POINTER(handle)]
lib.ap_close.argtypes = [handle]
lib.ap_close.restype = None
lib.ap_read.argtypes = [handle, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p),
                        ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(handle)]
lib.ap_release.argtypes = [handle]
lib.ap_release.restype = None
lib.ap_packs_open.argtypes = [handle, ctypes.POINTER(handle)]
lib.ap_packs_next.argtypes = [handle, ctypes.POINTER(PackInfo)]
lib.ap_packs_free.argtypes = [handle]
lib.ap_packs_free.restype = None
lib.ap_members_open.argtypes = [handle, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(handle)]
lib.ap_members_next.argtypes = [handle, ctypes.POINTER(MemberInfo)]
lib.ap_members_free.argtypes = [handle]
lib.ap_members_free.restype = None
lib.ap_strerror.restype = ctypes.c_char_p
lib.ap_last_error_message.restype = ctypes.c_char_p


class AssetPacksError(Exception):
    def __init__(self, code):
        self.code = code
        super().__init__("%s (%s)" % (lib.ap_last_error_message().decode(), lib.ap_strerror(code).decode()))


def check(rc):
    if rc < 0:
        raise AssetPacksError(rc)
    return rc


class Container:
    def __init__(self, path):
        self._c = handle()
        check(lib.ap_open(os.fsencode(path), 0, ctypes.byref(self._c)))

    def close(self):
        lib.ap_close(self._c)
        self._c = handle()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def packs(self):
        it = handle()
        check(lib.ap_packs_open(self._c, ctypes.byref(it)))
        try:
            info = PackInfo(struct_size=ctypes.sizeof(PackInfo))
            while check(lib.ap_packs_next(it, ctypes.byref(info))) == 1:
                yield info.id.decode(), info.version.decode(), info.member_count
        finally:
            lib.ap_packs_free(it)

    def members(self, pack, directory=None):
        it = handle()
        check(lib.ap_members_open(self._c, pack.encode(), directory.encode() if directory else None, ctypes.byref(it)))
        try:
            info = MemberInfo(struct_size=ctypes.sizeof(MemberInfo))
            while check(lib.ap_members_next(it, ctypes.byref(info))) == 1:
                yield info.path.decode(), info.size, "deflated" if info.method == AP_METHOD_DEFLATED else "stored"
        finally:
            lib.ap_members_free(it)

    def read(self, path, pack=None):
        """The member's bytes: a memoryview straight into the archive until
        copied; here copied into `bytes` and released at once."""
        data, size, held = ctypes.c_void_p(), ctypes.c_size_t(), handle()
        check(lib.ap_read(self._c, pack.encode() if pack else None, path.encode(),
                          ctypes.byref(data), ctypes.byref(size), ctypes.byref(held)))
        try:
            return ctypes.string_at(data, size.value)
        finally:
            lib.ap_release(held)


def main(argv):
    if len(argv) not in (2, 3, 4):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 64
    try:
        with Container(argv[1]) as c:
            if len(argv) == 2:
                for pack, version, count in c.packs():
                    print("%s (version %s, %d members)" % (pack, version, count))
                    for path, size, method in c.members(pack):
                        print("  %s\t%d bytes\t%s" % (path, size, method))
            else:
                sys.stdout.buffer.write(c.read(argv[2], argv[3] if len(argv) == 4 else None))
    except AssetPacksError as e:
        print("list_and_read.py: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
