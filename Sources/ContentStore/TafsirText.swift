import Diagnostics

/// A commentary block's HTML as the app shows it: plain text in paragraphs, the edition's words unchanged.
///
/// Block elements (`p`, `div`, `br`, headings, list items, `hr`, table rows) end a paragraph; every other tag is
/// dropped with its attributes, `script` and `style` with their content; character references are decoded; runs of
/// white space become one space; control characters, which HTML does not show, are dropped (ThaqalaynTafsirData's
/// fa.noor has a stray DEL in 48:29; a NUL cut the block short where SQLite stored it); Markdown residue that the
/// datasets' pipelines left in the HTML (`**`, `__`) is dropped. Nothing else is touched: Arabic keeps its marks,
/// punctuation stays as the edition has it.
public enum TafsirText {
    /// Paragraphs of plain text, empty ones left out.
    public static func paragraphs(fromHTML html: String) -> [String] {
        var paragraphs: [String] = []
        var current = ""
        func endParagraph() {
            let text = collapse(current)
            if !text.isEmpty { paragraphs.append(text) }
            current = ""
        }
        var scalars = Array(html.unicodeScalars)[...]
        while let first = scalars.first {
            if first == "<" {
                guard let close = scalars.firstIndex(of: ">") else {
                    current.unicodeScalars.append(contentsOf: scalars)
                    break
                }
                let tag = String(String.UnicodeScalarView(scalars[scalars.index(after: scalars.startIndex)..<close]))
                scalars = scalars[scalars.index(after: close)...]
                let name = tagName(tag)
                if name == "script" || name == "style" {
                    // Skip to the matching end tag, content and all.
                    let text = String(String.UnicodeScalarView(scalars)).lowercased()
                    if let end = text.range(of: "</\(name)") {
                        let skipped = text.unicodeScalars.distance(from: text.unicodeScalars.startIndex, to: end.lowerBound)
                        scalars = scalars.dropFirst(skipped)
                        if let gt = scalars.firstIndex(of: ">") { scalars = scalars[scalars.index(after: gt)...] } else { scalars = [] }
                    } else {
                        scalars = []
                    }
                    continue
                }
                if blockTags.contains(name) { endParagraph() }
                continue
            }
            if first == "&", let (decoded, length) = entity(scalars) {
                current.unicodeScalars.append(contentsOf: decoded.unicodeScalars)
                scalars = scalars.dropFirst(length)
                continue
            }
            current.unicodeScalars.append(first)
            scalars = scalars.dropFirst()
        }
        endParagraph()
        return paragraphs
    }

    /// The paragraphs joined by blank lines.
    public static func plain(fromHTML html: String) -> String { paragraphs(fromHTML: html).joined(separator: "\n\n") }

    static let blockTags: Set<String> = [
        "p", "/p", "div", "/div", "br", "br/", "hr", "hr/", "h1", "/h1", "h2", "/h2", "h3", "/h3", "h4", "/h4", "h5", "/h5", "h6", "/h6",
        "li", "/li", "ul", "/ul", "ol", "/ol", "tr", "/tr", "blockquote", "/blockquote", "section", "/section", "table", "/table",
    ]

    /// `p`, `/p`, `br/` from the text between `<` and `>`.
    static func tagName(_ tag: String) -> String {
        var name = ""
        for character in tag.lowercased() {
            if character == "/" && name.isEmpty {
                name.append(character)
                continue
            }
            if character.isLetter || character.isNumber { name.append(character) } else { break }
        }
        if tag.hasSuffix("/") && !name.hasPrefix("/") { name += "/" }
        return name
    }

    static let named: [String: String] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": " ", "ndash": "–", "mdash": "—", "hellip": "…",
        "lsquo": "‘", "rsquo": "’", "ldquo": "“", "rdquo": "”", "laquo": "«", "raquo": "»", "zwnj": "\u{200C}", "zwj": "\u{200D}",
        "rlm": "\u{200F}", "lrm": "\u{200E}",
    ]

    /// A character reference at the start of `scalars`: what it stands for and how many scalars it takes, or nil when
    /// it is not one (a lone `&` stays as it is).
    static func entity(_ scalars: ArraySlice<Unicode.Scalar>) -> (String, Int)? {
        guard let semicolon = scalars.prefix(12).firstIndex(of: ";") else { return nil }
        let body = String(String.UnicodeScalarView(scalars[scalars.index(after: scalars.startIndex)..<semicolon]))
        let length = scalars.distance(from: scalars.startIndex, to: semicolon) + 1
        if body.hasPrefix("#") {
            let digits = body.dropFirst()
            let value = digits.first == "x" || digits.first == "X" ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits)
            guard let value, let scalar = Unicode.Scalar(value), value != 0 else { return nil }
            return (String(scalar), length)
        }
        guard let text = named[body] else { return nil }
        return (text, length)
    }

    /// White space folded to single spaces, control characters and Markdown emphasis residue dropped, trimmed.
    static func collapse(_ text: String) -> String {
        var out = ""
        var space = false
        for scalar in text.replacingOccurrences(of: "**", with: "").replacingOccurrences(of: "__", with: "").unicodeScalars {
            if scalar.properties.isWhitespace {
                space = !out.isEmpty
                continue
            }
            if ImportedText.isControl(scalar) { continue }
            if space {
                out.unicodeScalars.append(" ")
                space = false
            }
            out.unicodeScalars.append(scalar)
        }
        return out
    }
}
