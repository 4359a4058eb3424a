import AssetPacks
import CAssetPacksHeader
#if canImport(Glibc)
import Glibc
#endif

/// What an `ap_container *` points to: a retained box around the manager.
final class ContainerHandle {
    let manager: AssetPackManager
    let writable: Bool
    /// `ap_container_path`'s string, freed with the handle.
    let path: UnsafeMutablePointer<CChar>

    init(manager: AssetPackManager, writable: Bool) {
        self.manager = manager
        self.writable = writable
        path = strdup(manager.container.path)
    }

    deinit { free(path) }

    /// The handle behind `pointer`; nil for NULL.
    @inline(__always)
    static func from(_ pointer: OpaquePointer?) -> ContainerHandle? {
        pointer.map { Unmanaged<ContainerHandle>.fromOpaque(UnsafeRawPointer($0)).takeUnretainedValue() }
    }

    /// Refuses with `AP_EREADONLY` unless the container was opened read-write.
    func requireWritable(_ operation: String) throws(Refusal) {
        guard writable else {
            throw Refusal(code: AP_EREADONLY, message: "cannot \(operation): the container \(manager.container.path) was opened read-only (AP_OPEN_READWRITE allows changes)",
                          path: manager.container.path)
        }
    }
}

/// The C layer's argument checks, each refusing with `AP_EINVAL` and the
/// function and argument at fault.
enum Argument {
    /// The string at `pointer`, which must be non-NULL and UTF-8.
    @inline(__always)
    static func string(_ pointer: UnsafePointer<CChar>?, _ function: StaticString, _ name: StaticString) throws(Refusal) -> String {
        guard let pointer else { throw .invalid(function, name, "is NULL") }
        guard let s = utf8(pointer) else { throw .invalid(function, name, "is not UTF-8") }
        return s
    }

    /// The string at `pointer` if it is valid UTF-8. `String(decoding:)`
    /// takes the fast path for contiguous bytes (twice as fast here as
    /// `String(validatingCString:)`), and repairs what is not UTF-8: the
    /// same bytes back mean there was nothing to repair.
    @inline(__always)
    static func utf8(_ pointer: UnsafePointer<CChar>) -> String? {
        let count = strlen(pointer)
        let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: count)
        var s = String(decoding: bytes, as: UTF8.self)
        let same = s.withUTF8 { $0.count == count && (count == 0 || memcmp($0.baseAddress!, pointer, count) == 0) }
        return same ? s : nil
    }

    /// The string at `pointer`, or nil for NULL; must be UTF-8.
    @inline(__always)
    static func optionalString(_ pointer: UnsafePointer<CChar>?, _ function: StaticString, _ name: StaticString) throws(Refusal) -> String? {
        guard let pointer else { return nil }
        return try string(pointer, function, name)
    }

    /// A pack ID, or nil for NULL; must be UTF-8. A program names the same
    /// few packs again and again, so each thread keeps the last one it
    /// converted and compares bytes instead of converting again.
    @inline(__always)
    static func pack(_ pointer: UnsafePointer<CChar>?, _ function: StaticString) throws(Refusal) -> String? {
        guard let pointer else { return nil }
        guard let s = PackIDCache.perThread.current.string(for: pointer) else { throw .invalid(function, "pack", "is not UTF-8") }
        return s
    }

    /// The container behind `pointer`, which must be non-NULL.
    @inline(__always)
    static func container(_ pointer: OpaquePointer?, _ function: StaticString) throws(Refusal) -> ContainerHandle {
        guard let handle = ContainerHandle.from(pointer) else { throw .invalid(function, "container", "is NULL") }
        return handle
    }

    /// `pointer`, which must be non-NULL.
    @inline(__always)
    static func required<T>(_ pointer: UnsafeMutablePointer<T>?, _ function: StaticString, _ name: StaticString) throws(Refusal) -> UnsafeMutablePointer<T> {
        guard let pointer else { throw .invalid(function, name, "is NULL") }
        return pointer
    }

    /// Refuses a bit of `flags` outside `known`.
    static func flags(_ flags: UInt32, known: UInt32, _ function: StaticString) throws(Refusal) {
        guard flags & ~known == 0 else { throw .invalid(function, "flags", "has unknown bits 0x" + String(flags & ~known, radix: 16)) }
    }

    /// Refuses a caller's structure smaller than `size` bytes, as its
    /// leading `struct_size` says.
    static func structSize(_ given: Int, _ size: Int, _ function: StaticString, _ name: StaticString) throws(Refusal) {
        guard given >= size else {
            throw .invalid(function, name, "has struct_size \(given), less than this version's \(size) (set it to sizeof the structure)")
        }
    }
}

/// The last pack ID a thread converted, as its C bytes and as a String.
final class PackIDCache {
    private var bytes: UnsafeMutablePointer<CChar>?
    private var string = ""

    static let perThread = ThreadLocal { PackIDCache() }

    deinit { free(bytes) }

    /// The String of the pack ID at `pointer`, or nil when it is not UTF-8.
    @inline(__always)
    func string(for pointer: UnsafePointer<CChar>) -> String? {
        if let bytes, strcmp(bytes, pointer) == 0 { return string }
        guard let s = Argument.utf8(pointer) else { return nil }
        free(bytes)
        bytes = strdup(pointer)
        string = s
        return s
    }
}

/// A call refused by the C layer itself (`AP_EINVAL`, `AP_ERANGE`,
/// `AP_EREADONLY`), with its message.
struct Refusal: Error {
    let code: Int32
    let message: String
    var pack: String? = nil
    var member: String? = nil
    var path: String? = nil

    static func invalid(_ function: StaticString, _ argument: StaticString, _ problem: String) -> Refusal {
        Refusal(code: AP_EINVAL, message: "\(function): \(argument) \(problem)")
    }
}

/// Runs the body of a C entry point: a thrown error becomes this thread's
/// last error and the function's negative result.
@inline(__always)
func call(_ body: () throws -> Int32) -> Int32 {
    do {
        return try body()
    } catch let error as AssetPackError {
        return fail(error)
    } catch let refusal as Refusal {
        return fail(refusal.code, refusal.message, pack: refusal.pack, member: refusal.member, path: refusal.path)
    } catch {
        return fail(AP_EINVAL, "\(error)")
    }
}

/// A C string that is always there: "" for empty results and the
/// non-NULL pointer of an empty member.
nonisolated(unsafe) let emptyCString: UnsafePointer<CChar> = {
    let p = UnsafeMutablePointer<CChar>.allocate(capacity: 1)
    p.initialize(to: 0)
    return UnsafePointer(p)
}()
