import Foundation
import Testing
@testable import AssetDelivery
import AssetStore
import TestSupport

/// The status record and the request file: their bytes, and what readers
/// make of files that are not one.
@Suite struct DownloadStatusTests {
    let record = DownloadStatus(
        pack: "Base", download: "3f9c0d2e5a7b1c44", state: .downloading, bytes: 1 << 20, total: 64 << 20, rate: 50 << 20,
        version: "2", url: "http://127.0.0.1:8080/Base-0123456789ab.zip", pid: 4242,
        started: 1_796_124_000_123_456, updated: 1_796_124_001_123_456)

    @Test func aRecordIsOneLineOfJSONThatReadsBack() throws {
        let bytes = record.encoded()
        #expect(bytes.last == 0x0a && bytes.dropLast().allSatisfy { $0 != 0x0a })
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text == #"{"format":1,"pack":"Base","download":"3f9c0d2e5a7b1c44","state":"downloading","bytes":1048576,"total":67108864,"rate":52428800,"version":"2","url":"http://127.0.0.1:8080/Base-0123456789ab.zip","pid":4242,"started":1796124000123456,"updated":1796124001123456,"mode":"full","fetched":0,"reused":0}"# + "\n")
        #expect(DownloadStatus(parsing: bytes) == record)
        // Python reads it as the documented object.
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(object["state"] as? String == "downloading" && object["bytes"] as? Int == 1 << 20)
        var failed = record
        (failed.state, failed.error, failed.code, failed.reason) = (.failed, "not found (HTTP 404)", 48, nil)
        #expect(DownloadStatus(parsing: failed.encoded()) == failed)
        #expect(String(decoding: failed.encoded(running: false), as: UTF8.self).hasSuffix(#""error":"not found (HTTP 404)","code":48,"running":false}"# + "\n"))
    }

    @Test func filesThatAreNotARecordReadAsNone() {
        let good = String(decoding: record.encoded(), as: UTF8.self)
        for bad in ["", "{", "[]", good.replacingOccurrences(of: #""format":1"#, with: #""format":2"#),
                    good.replacingOccurrences(of: #""state":"downloading""#, with: #""state":"sleeping""#),
                    good.replacingOccurrences(of: #""pid":4242,"#, with: #""pid":99999999999,"#),
                    good.replacingOccurrences(of: #""bytes":1048576,"#, with: "")] {
            #expect(DownloadStatus(parsing: Array(bad.utf8)) == nil, "\(bad)")
        }
    }

    @Test func requestsReadBackAndNothingElseDoes() {
        let control = DownloadControl(download: "3f9c0d2e5a7b1c44", request: .cancel)
        #expect(String(decoding: control.encoded(), as: UTF8.self) == #"{"download":"3f9c0d2e5a7b1c44","request":"cancel"}"# + "\n")
        #expect(DownloadControl(parsing: control.encoded()) == control)
        for bad in [#"{"download":"x","request":"stop"}"#, #"{"request":"pause"}"#, "pause"] {
            #expect(DownloadControl(parsing: Array(bad.utf8)) == nil, "\(bad)")
        }
    }

    @Test func theBoardListsRecordsAndIgnoresTemporaryAndForeignFiles() throws {
        let dir = TemporaryDirectory("download-board")
        let board = DownloadBoard(store: try AssetStore(container: GroupContainer(path: dir.path)))
        try board.write(record)
        var other = record
        other.pack = "Alpha"
        try board.write(other)
        try dir.write("downloads/.tmp-Zeta.status-1234", record.encoded())
        try dir.write("downloads/Junk.status", "not json")
        #expect(board.all().map(\.pack) == ["Alpha", "Base"])
        #expect(board.status(of: "Junk") == nil && board.status(of: "Missing") == nil)
        #expect(!board.isRunning("Base"))
        // A request reaches the download it names only.
        try board.send(DownloadControl(download: record.download, request: .pause), to: "Base")
        #expect(board.control(of: "Base") == .request(DownloadControl(download: record.download, request: .pause)))
        board.clearControl(of: "Base")
        #expect(board.control(of: "Base") == DownloadBoard.ControlReading.none)
    }
}
