import AssetSystem

/// The validators of a file: what conditional requests compare against.
package struct Validators: Sendable, Equatable {
    /// The strong entity tag, with its quotes: `"<inode>-<size>-<mtime ns>"` in hexadecimal.
    package let etag: String
    /// The modification time, in whole seconds since 1970 UTC.
    package let lastModified: Int64

    /// The validators of a file with this inode, size and modification time.
    package init(inode: UInt64, size: Int64, mtimeSeconds: Int64, mtimeNanoseconds: Int64) {
        let nanoseconds = mtimeSeconds &* 1_000_000_000 &+ mtimeNanoseconds
        etag = "\"\(String(inode, radix: 16))-\(String(size, radix: 16))-\(String(UInt64(bitPattern: nanoseconds), radix: 16))\""
        lastModified = mtimeSeconds
    }
}

/// An entity tag as a conditional field names it.
package struct EntityTag: Sendable, Equatable {
    /// `W/` was given.
    package let weak: Bool
    /// The opaque tag with its quotes.
    package let opaque: String
}

/// The value of If-Match or If-None-Match: `*`, or entity tags.
package enum TagList: Sendable, Equatable {
    case any
    case tags([EntityTag])

    /// Whether the list names `etag`: by strong comparison (neither weak,
    /// same opaque tag) or weak comparison (same opaque tag).
    func names(_ etag: String, strong: Bool) -> Bool {
        switch self {
        case .any: return true
        case .tags(let list): return list.contains { (!strong || !$0.weak) && $0.opaque == etag }
        }
    }
}

/// What the conditional fields of a GET or HEAD ask (RFC 9110 §13.2.2).
package enum ConditionOutcome: Sendable, Equatable {
    /// Answer the request; `honourRange` is false when If-Range does not match.
    case proceed(honourRange: Bool)
    /// 304: the client's copy is current.
    case notModified
    /// 412: If-Match or If-Unmodified-Since failed.
    case preconditionFailed
}

/// Evaluation of If-Match, If-Unmodified-Since, If-None-Match,
/// If-Modified-Since and If-Range, in the order RFC 9110 §13.2.2 gives.
package enum Conditions {
    /// A list of entity tags, or `*`; `nil` when the value is not one
    /// (the field is then ignored).
    package static func tags(_ value: String) -> TagList? {
        let trimmed = value.trimmingWhitespace()
        if trimmed == "*" { return .any }
        var tags: [EntityTag] = []
        var bytes = Array(trimmed.utf8)[...]
        while true {
            while let b = bytes.first, b == 0x20 || b == 0x09 || b == 0x2C { bytes = bytes.dropFirst() }
            if bytes.isEmpty { break }
            var weak = false
            if bytes.starts(with: [0x57, 0x2F]) { weak = true; bytes = bytes.dropFirst(2) }
            guard bytes.first == 0x22, let close = bytes.dropFirst().firstIndex(of: 0x22) else { return nil }
            let opaque = bytes[bytes.startIndex...close]
            guard opaque.dropFirst().dropLast().allSatisfy({ $0 == 0x21 || ($0 >= 0x23 && $0 != 0x7F) }) else { return nil }
            tags.append(EntityTag(weak: weak, opaque: String(decoding: opaque, as: UTF8.self)))
            bytes = bytes[(close + 1)...]
            while let b = bytes.first, b == 0x20 || b == 0x09 { bytes = bytes.dropFirst() }
            guard bytes.isEmpty || bytes.first == 0x2C else { return nil }
        }
        return tags.isEmpty ? nil : .tags(tags)
    }

    /// Evaluates the request's conditional fields against the file's validators.
    ///
    /// An If-Match that is not a list of entity tags matches nothing (412);
    /// an If-None-Match that is not one matches nothing either (no 304), and,
    /// being present, still makes If-Modified-Since ignored (RFC 9110 §13.1.3).
    package static func evaluate(_ request: HTTPRequest, _ validators: Validators) -> ConditionOutcome {
        if let value = request.field("if-match") {
            // Strong comparison; `*` matches any current file.
            guard tags(value)?.names(validators.etag, strong: true) == true else { return .preconditionFailed }
        } else if let value = request.field("if-unmodified-since"), let date = HTTPDate.parse(value),
                  validators.lastModified > date {
            return .preconditionFailed
        }
        if let value = request.field("if-none-match") {
            // Weak comparison.
            if tags(value)?.names(validators.etag, strong: false) == true { return .notModified }
        } else if let value = request.field("if-modified-since"), let date = HTTPDate.parse(value),
                  validators.lastModified <= date {
            return .notModified
        }
        return .proceed(honourRange: ifRangeMatches(request, validators))
    }

    /// Whether a Range may be honoured: no If-Range, or one that names the
    /// current strong entity tag or exactly the Last-Modified date.
    static func ifRangeMatches(_ request: HTTPRequest, _ validators: Validators) -> Bool {
        guard let value = request.field("if-range")?.trimmingWhitespace() else { return true }
        if value.hasPrefix("\"") || value.hasPrefix("W/") {
            guard case .tags(let list)? = tags(value), list.count == 1 else { return false }
            return TagList.tags(list).names(validators.etag, strong: true)
        }
        return HTTPDate.parse(value) == validators.lastModified
    }
}
