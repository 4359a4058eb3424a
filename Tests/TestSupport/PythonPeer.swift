import Foundation

/// Another process on an LMDB environment: Python driving the system's
/// liblmdb through ctypes, so none of this package's code is involved.
///
/// `stale <dir>` begins a read transaction, prints its pid and dies without
/// closing anything, leaving a stale reader slot. `grow <dir> <mapsize>
/// <count> <size> <prefix>` writes `count` values of `size` bytes into
/// `members` with keys `<prefix><n>`, using a map of `mapsize` bytes, and
/// commits.
package enum PythonPeer {
    package static let script = #"""
    import ctypes, os, sys
    lib = ctypes.CDLL("liblmdb.so.0")
    P = ctypes.c_void_p
    class Val(ctypes.Structure):
        _fields_ = [("size", ctypes.c_size_t), ("data", ctypes.c_void_p)]
    lib.mdb_strerror.restype = ctypes.c_char_p
    lib.mdb_env_create.argtypes = [ctypes.POINTER(P)]
    lib.mdb_env_set_mapsize.argtypes = [P, ctypes.c_size_t]
    lib.mdb_env_set_maxdbs.argtypes = [P, ctypes.c_uint]
    lib.mdb_env_open.argtypes = [P, ctypes.c_char_p, ctypes.c_uint, ctypes.c_uint]
    lib.mdb_txn_begin.argtypes = [P, P, ctypes.c_uint, ctypes.POINTER(P)]
    lib.mdb_dbi_open.argtypes = [P, ctypes.c_char_p, ctypes.c_uint, ctypes.POINTER(ctypes.c_uint)]
    lib.mdb_put.argtypes = [P, ctypes.c_uint, ctypes.POINTER(Val), ctypes.POINTER(Val), ctypes.c_uint]
    lib.mdb_txn_commit.argtypes = [P]
    lib.mdb_env_close.argtypes = [P]

    def ok(rc, what):
        if rc != 0:
            sys.stderr.write("%s: %s\n" % (what, lib.mdb_strerror(rc).decode()))
            os._exit(2)

    mode, path = sys.argv[1], sys.argv[2]
    env = P()
    ok(lib.mdb_env_create(ctypes.byref(env)), "mdb_env_create")
    ok(lib.mdb_env_set_maxdbs(env, 16), "mdb_env_set_maxdbs")
    if mode == "grow":
        ok(lib.mdb_env_set_mapsize(env, int(sys.argv[3])), "mdb_env_set_mapsize")
    ok(lib.mdb_env_open(env, path.encode(), 0x200000, 0o644), "mdb_env_open")
    txn = P()
    if mode == "stale":
        ok(lib.mdb_txn_begin(env, None, 0x20000, ctypes.byref(txn)), "mdb_txn_begin")
        print(os.getpid(), flush=True)
        os._exit(0)
    count, size, prefix = int(sys.argv[4]), int(sys.argv[5]), sys.argv[6].encode()
    ok(lib.mdb_txn_begin(env, None, 0, ctypes.byref(txn)), "mdb_txn_begin")
    dbi = ctypes.c_uint()
    ok(lib.mdb_dbi_open(txn, b"members", 0, ctypes.byref(dbi)), "mdb_dbi_open")
    payload = ctypes.create_string_buffer(b"p" * size, size)
    for n in range(count):
        k = b"%s%08d" % (prefix, n)
        kb = ctypes.create_string_buffer(k, len(k))
        ok(lib.mdb_put(txn, dbi, ctypes.byref(Val(len(k), ctypes.cast(kb, P))),
                       ctypes.byref(Val(size, ctypes.cast(payload, P))), 0), "mdb_put")
    ok(lib.mdb_txn_commit(txn), "mdb_txn_commit")
    lib.mdb_env_close(env)
    print("ok", flush=True)
    """#

    /// Whether `python3` can load liblmdb here.
    package static let isAvailable: Bool = (try? run(["-c", "import ctypes; ctypes.CDLL('liblmdb.so.0')"]))?.status == 0

    /// Runs the script (or other Python arguments) and returns its exit
    /// status and standard output.
    package static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let result = try Program.run("python3", arguments)
        return (result.status, result.out.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Leaves a stale reader slot in the environment at `path`; returns the
    /// dead process's pid.
    package static func leaveStaleReader(in path: String) throws -> Int32? {
        let (status, output) = try run(["-c", script, "stale", path])
        return status == 0 ? Int32(output) : nil
    }

    /// Writes `count` values of `size` bytes with a map of `mapSize` bytes.
    package static func write(in path: String, mapSize: Int, count: Int, size: Int, prefix: String) throws -> Bool {
        try run(["-c", script, "grow", path, String(mapSize), String(count), String(size), prefix]) == (0, "ok")
    }
}
