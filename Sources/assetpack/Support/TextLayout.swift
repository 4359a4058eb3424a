/// Plain-text layout for help and human output: wrapping, counted nouns,
/// aligned columns.
enum TextLayout {
    /// The width help text is wrapped to.
    static let width = 80
    /// The column option and argument descriptions start at.
    static let descriptionColumn = 26

    /// `1 file`, `2 files`; `plural` when it is not `singular` + "s".
    static func count(_ n: some BinaryInteger, _ singular: String, plural: String? = nil) -> String {
        "\(n) " + (n == 1 ? singular : plural ?? singular + "s")
    }

    /// Splits `text` into lines of at most `width` characters (a longer word
    /// gets a line of its own), the first indented by `firstIndent`, the
    /// rest by `indent`.
    static func wrap(_ text: String, width: Int = width, indent: Int, firstIndent: Int? = nil) -> [String] {
        var lines: [String] = []
        var line = String(repeating: " ", count: firstIndent ?? indent)
        var lineHasWord = false
        for word in text.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            if lineHasWord && line.count + 1 + word.count > width {
                lines.append(line)
                line = String(repeating: " ", count: indent)
                lineHasWord = false
            }
            line += (lineHasWord ? " " : "") + word
            lineHasWord = true
        }
        lines.append(line)
        return lines
    }

    /// `label` at two spaces in, `text` wrapped from `column`; a label too
    /// long for its column puts the text on the next line.
    static func entry(_ label: String, _ text: String, column: Int = descriptionColumn) -> [String] {
        let head = "  " + label
        guard !text.isEmpty else { return [head] }
        if head.count + 2 <= column {
            var lines = wrap(text, indent: column)
            lines[0] = head.padded(to: column) + lines[0].dropFirst(column)
            return lines
        }
        return [head] + wrap(text, indent: column)
    }
}

/// Rows of cells laid out in columns as wide as their widest cell, each
/// column aligned left or right, separated by `gap` spaces (or a column's
/// own gap before it). Trailing spaces are dropped.
struct TextTable {
    enum Alignment { case left, right }

    private let alignments: [Alignment]
    private let gaps: [Int]
    private var rows: [[String]] = []

    /// - Parameters:
    ///   - alignments: One per column.
    ///   - gaps: Spaces before each column but the first (default: two each).
    init(_ alignments: [Alignment], gaps: [Int]? = nil) {
        self.alignments = alignments
        self.gaps = gaps ?? Array(repeating: 2, count: max(0, alignments.count - 1))
        Swift.precondition(self.gaps.count == max(0, alignments.count - 1), "one gap between each two columns")
    }

    mutating func add(_ cells: [String]) {
        Swift.precondition(cells.count == alignments.count, "a row has one cell per column")
        rows.append(cells)
    }

    /// `count unit` as two cells, so that the numbers and units line up:
    /// `["1", "file"]`, `["12", "files"]`.
    static func counted(_ n: some BinaryInteger, _ singular: String, plural: String? = nil) -> [String] {
        ["\(n)", n == 1 ? singular : plural ?? singular + "s"]
    }

    /// The laid-out lines.
    var lines: [String] {
        let widths = alignments.indices.map { c in rows.map { $0[c].count }.max() ?? 0 }
        return rows.map { row in
            var line = ""
            for (c, cell) in row.enumerated() {
                if c > 0 { line += String(repeating: " ", count: gaps[c - 1]) }
                let pad = String(repeating: " ", count: widths[c] - cell.count)
                line += alignments[c] == .left ? cell + pad : pad + cell
            }
            while line.last == " " { line.removeLast() }
            return line
        }
    }
}

extension String {
    /// The string, padded with spaces to at least `length` characters.
    func padded(to length: Int) -> String {
        count >= length ? self : self + String(repeating: " ", count: length - count)
    }
}
