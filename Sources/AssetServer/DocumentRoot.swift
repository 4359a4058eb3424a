import AssetSystem
#if canImport(Glibc)
import Glibc
#endif

/// A regular file opened for a response, with what its headers need.
final class OpenFile {
    let descriptor: FileDescriptor
    let size: Int64
    let validators: Validators

    init(_ descriptor: consuming FileDescriptor, _ status: Syscall.Status) {
        self.descriptor = descriptor
        size = status.size
        validators = Validators(inode: status.inode, size: status.size, mtimeSeconds: status.mtimeSeconds,
                                mtimeNanoseconds: status.mtimeNanoseconds)
    }
}

/// The directory being served, open, and the lookups beneath it. No lookup
/// leaves it: paths are opened relative to its descriptor, never by name
/// from `/` (see ``Syscall/openBeneath(_:_:directory:allowOpenat2:)``).
final class DocumentRoot {
    /// What a target names.
    enum Lookup {
        case file(OpenFile)
        /// A directory without `index.html`: its listing, as HTML.
        case listing([UInt8])
        /// A directory asked for without the trailing `/`: where it is.
        case redirect(String)
        case notFound
        case forbidden
        case failed(Errno)
    }

    let descriptor: FileDescriptor
    let path: String
    /// Whether `openat2` may be used (tests turn it off to check the fallback).
    let allowOpenat2: Bool

    init(path: String, allowOpenat2: Bool = true) throws(ServerError) {
        do {
            descriptor = try FileDescriptor.open(path, [.readOnly, .directory])
        } catch {
            throw .directory(path: path, error)
        }
        self.path = path
        self.allowOpenat2 = allowOpenat2
    }

    /// Looks `target` up beneath the root: a regular file; a directory's
    /// `index.html` or listing; a redirect to `dir/`; or why not.
    func lookup(_ target: RequestTarget) -> Lookup {
        let opened: FileDescriptor
        do {
            opened = try Syscall.openBeneath(descriptor.rawValue, target.relativePath, directory: false, allowOpenat2: allowOpenat2)
        } catch {
            return Self.refusal(error)
        }
        let status: Syscall.Status
        do { status = try Syscall.status(opened.rawValue) } catch { return .failed(error) }
        if status.isRegular { return .file(OpenFile(opened, status)) }
        guard status.isDirectory else { return .forbidden }
        if !target.trailingSlash && !target.segments.isEmpty { return .redirect(target.rawPath + "/") }
        do {
            let index = try Syscall.openBeneath(opened.rawValue, Array("index.html".utf8), directory: false, allowOpenat2: allowOpenat2)
            let indexStatus = try Syscall.status(index.rawValue)
            if indexStatus.isRegular { return .file(OpenFile(index, indexStatus)) }
        } catch {
            if error != .noSuchFile { return Self.refusal(error) }
        }
        return .listing(Self.listing(of: opened, title: target.decodedPath))
    }

    /// Missing, and anything that would lead outside (a symlink out, a
    /// symlink at all on the fallback), is 404; no permission is 403.
    static func refusal(_ error: Errno) -> Lookup {
        switch error {
        case .noSuchFile, .notDirectory, .tooManySymbolicLinkLevels, .crossDevice, .nameTooLong: return .notFound
        case .permissionDenied, .notPermitted: return .forbidden
        default: return .failed(error)
        }
    }

    /// A minimal HTML page linking the directory's entries, sorted, with a
    /// `/` after subdirectories.
    static func listing(of directory: borrowing FileDescriptor, title: String) -> [UInt8] {
        let names = FileSystem.names(in: .descriptor(directory.rawValue)).sorted()
        var html = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Index of \(escaped(title))</title></head>\n"
        html += "<body><h1>Index of \(escaped(title))</h1>\n<ul>\n"
        for name in names {
            let isDirectory = Syscall.mode(of: name, in: directory.rawValue).map { $0 & 0o170000 == 0o040000 } ?? false
            let suffix = isDirectory ? "/" : ""
            html += "<li><a href=\"\(RequestTarget.percentEncoded(Array(name.utf8)))\(suffix)\">\(escaped(name))\(suffix)</a></li>\n"
        }
        html += "</ul></body></html>\n"
        return Array(html.utf8)
    }

    /// `text` as HTML text or attribute value: `& < > " '` as character
    /// references, and what ``TerminalText`` escapes (control characters,
    /// bidirectional formatting characters) spelled out as `\x1b`,
    /// `\u{202e}` — a reference such as `&#x1b;` would still put the
    /// control character into the page.
    static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: if TerminalText.isUnsafe(scalar) { out += TerminalText.escape(scalar) } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out
    }
}
