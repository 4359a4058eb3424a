import AssetServer
import AssetSystem

/// The `http-request` target: `assetpack serve`'s reading of one
/// connection's bytes, request after request (pipelining), and of each
/// request's target, Range and conditional fields.
enum HTTPRequestFuzzing {
    static let validators = Validators(inode: 42, size: 1000, mtimeSeconds: 784_111_777, mtimeNanoseconds: 0)

    /// Parses `bytes` as a stream of request heads; returns whether at least
    /// one parsed. Traps when a result breaks its contract.
    static func requests(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        var parsed = 0
        while offset < bytes.count {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
            switch HTTPRequest.parse(rest, limit: 4096) {
            case .incomplete, .refused:
                return parsed > 0
            case .request(let request, let consumed):
                precondition(consumed > 0 && consumed <= rest.count, "consumed \(consumed) of \(rest.count) bytes")
                check(request)
                parsed += 1
                offset += consumed
            }
        }
        return parsed > 0
    }

    static func check(_ request: HTTPRequest) {
        _ = request.check()
        _ = request.keepsAlive
        if let target = try? RequestTarget(parsing: request.target) {
            for segment in target.segments {
                precondition(!segment.isEmpty && segment != [0x2E] && segment != [0x2E, 0x2E], "a segment that is empty, . or ..")
                precondition(!segment.contains(0) && !segment.contains(0x2F) && !segment.contains(0x5C), "NUL, / or \\ in a segment")
            }
        }
        if let range = request.field("range") {
            for length: Int64 in [0, 1, 1000, .max] {
                if case .partial(let first, let last) = ByteRange.evaluate(range, length: length) {
                    precondition(0 <= first && first <= last && last < length, "range \(first)-\(last) of \(length)")
                }
            }
        }
        _ = Conditions.evaluate(request, validators)
        for name in ["if-modified-since", "if-unmodified-since", "if-range"] {
            guard let value = request.field(name), let date = HTTPDate.parse(value) else { continue }
            precondition(HTTPDate.parse(HTTPDate.format(date)) == date, "a date does not survive formatting")
        }
    }
}
