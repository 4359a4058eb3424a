import AssetSystem
#if canImport(Glibc)
import Glibc
#endif

/// Decides the response to each request: refusals, injected failures,
/// lookups beneath the root, conditional requests and ranges.
final class Responder {
    let root: DocumentRoot
    let faults: FaultPlan
    private var generator: SeededGenerator

    init(root: DocumentRoot, faults: FaultPlan) {
        self.root = root
        self.faults = faults
        generator = SeededGenerator(seed: faults.seed)
    }

    /// The response to a request head the parser refused.
    func respond(to refusal: HTTPRefusal) -> Response {
        var response = Response.error(refusal.status, closes: true,
                                      fields: refusal.status == 405 ? [("Allow", "GET, HEAD")] : [])
        response.note = "\(refusal)"
        return response
    }

    /// The response to a parsed request; the access log notes the `Range`
    /// it asked for (`range=bytes=100-`), if any.
    func respond(to request: HTTPRequest) -> Response {
        var response = answer(request)
        if let range = request.field("range") {
            // One token: anything but visible ASCII (and `"`) becomes `?`.
            let printable = range.utf8.prefix(100).map { $0 > 0x20 && $0 < 0x7F && $0 != 0x22 ? $0 : UInt8(ascii: "?") }
            response.note = [response.note, "range=" + String(decoding: printable, as: UTF8.self)].compactMap { $0 }.joined(separator: " ")
        }
        return response
    }

    private func answer(_ request: HTTPRequest) -> Response {
        if let refusal = request.check() { return respond(to: refusal) }
        let target: RequestTarget
        do { target = try RequestTarget(parsing: request.target) } catch { return respond(to: .badTarget(error)) }
        let faulty = faults.pathPattern.map { fnmatch($0, target.decodedPath, 0) == 0 } ?? true
        if faulty && faults.failRate > 0 && generator.fraction() < faults.failRate {
            // One draw decides whether to fail, a second which failure.
            let unavailable = generator.next() & 1 == 1
            var response = Response.error(unavailable ? 503 : 500, fields: unavailable ? [("Retry-After", "1")] : [])
            response.note = "fault=\(response.status)"
            return response
        }
        return lookup(request, target, faulty: faulty)
    }

    private func lookup(_ request: HTTPRequest, _ target: RequestTarget, faulty: Bool) -> Response {
        switch root.lookup(target) {
        case .notFound: return .error(404)
        case .forbidden: return .error(403)
        case .failed(let error):
            var response = Response.error(500)
            response.note = "\(error)"
            return response
        case .redirect(let location): return Response.error(301, fields: [("Location", location)])
        case .listing(let html):
            return Response(status: 200, fields: [("Content-Type", "text/html; charset=utf-8")], body: .bytes(html))
        case .file(let file):
            let name = target.segments.last ?? Array("index.html".utf8)
            return respond(request, file, contentType: target.trailingSlash || target.segments.isEmpty
                               ? "text/html; charset=utf-8" : Response.contentType(name), faulty: faulty)
        }
    }

    private func respond(_ request: HTTPRequest, _ file: OpenFile, contentType: String, faulty: Bool) -> Response {
        let v = file.validators
        var fields: [(name: String, value: String)] = [
            ("Accept-Ranges", "bytes"), ("ETag", v.etag), ("Last-Modified", HTTPDate.format(v.lastModified)),
        ]
        switch Conditions.evaluate(request, v) {
        case .notModified: return Response(status: 304, fields: fields)
        case .preconditionFailed: return .error(412)
        case .proceed(let honourRange):
            fields.insert(("Content-Type", contentType), at: 0)
            var outcome = RangeOutcome.whole
            if honourRange, let range = request.field("range"), !(faulty && faults.ignoreRange) {
                outcome = ByteRange.evaluate(range, length: file.size)
            }
            var response: Response
            switch outcome {
            case .whole:
                response = Response(status: 200, fields: fields, body: .file(file, offset: 0, length: file.size))
            case .partial(let first, let last):
                fields.append(("Content-Range", "bytes \(first)-\(last)/\(file.size)"))
                response = Response(status: 206, fields: fields, body: .file(file, offset: first, length: last - first + 1))
            case .unsatisfiable:
                return .error(416, fields: [("Content-Range", "bytes */\(file.size)"), ("Accept-Ranges", "bytes")])
            }
            response.faultable = faulty
            if faulty && faults.ignoreRange && request.field("range") != nil { response.note = "fault=ignore-range" }
            return response
        }
    }
}
