#if canImport(Glibc)
import Glibc
#endif

/// NUL-terminated copies of strings, made once, as a C program holds its
/// paths; freed with their owner.
final class CStrings {
    private let pointers: [UnsafeMutablePointer<CChar>]

    init(_ strings: [String]) { pointers = strings.map { strdup($0)! } }

    deinit { pointers.forEach { free($0) } }

    @inline(__always)
    subscript(_ i: Int) -> UnsafePointer<CChar> { UnsafePointer(pointers[i]) }
}
