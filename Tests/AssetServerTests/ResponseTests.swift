import Testing
@testable import AssetServer

/// What the server writes around a response: its head and the types it names.
@Suite struct ResponseTests {
    @Test func theHeadCarriesDateLengthAndConnection() {
        var r = Response(status: 206, fields: [("Content-Range", "bytes 0-1/10")], body: .bytes([1, 2]))
        let text = String(decoding: r.head(date: 784_111_777, keepAlive: true), as: UTF8.self)
        #expect(text == "HTTP/1.1 206 Partial Content\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\nServer: assetpack-serve\r\n"
                + "Content-Range: bytes 0-1/10\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\n")
        r.status = 304
        let notModified = String(decoding: r.head(date: 0, keepAlive: false), as: UTF8.self)
        #expect(!notModified.contains("Content-Length") && notModified.contains("Connection: close\r\n"))
        let error = Response.error(404)
        #expect(error.status == 404 && error.body.length == Int64("404 Not Found\n".utf8.count))
    }

    @Test(arguments: [
        ("catalog.json", "application/json"), ("p.ZIP", "application/zip"), ("catalog.json.sig", "application/octet-stream"),
        ("index.html", "text/html; charset=utf-8"), ("a.txt", "text/plain; charset=utf-8"), ("README", "application/octet-stream"),
        ("x.bin", "application/octet-stream"), (".json", "application/json"),
    ])
    func contentTypesFollowTheExtension(_ name: String, _ type: String) {
        #expect(Response.contentType(Array(name.utf8)) == type)
    }
}
