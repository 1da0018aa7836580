/// Shortening text to fit a byte budget: at a word boundary, with an ellipsis, never inside a grapheme
/// (so never inside a UTF-8 sequence, and never between an Arabic letter and its marks).
public enum TextShortening {
    public static let ellipsis = "…"
    /// What a shortened text never ends on before its ellipsis.
    static let trailing: Set<Character> = [",", ";", ":", ".", "!", "?", "(", "[", "{", "\"", "'", "“", "‘", "«", "-", "—", "–", "،", "؛", "؟", "۔"]

    /// `text` cut to at most `limit` UTF-8 bytes including a closing ellipsis: after a whole word where one fits,
    /// otherwise after whole characters (grapheme clusters) of the first word. Text that fits is returned as it is.
    public static func shorten(_ text: String, toAtMostBytes limit: Int) -> String {
        if text.utf8.count <= limit { return text }
        let target = limit - ellipsis.utf8.count
        guard target > 0 else { return limit >= ellipsis.utf8.count ? ellipsis : "" }
        // Whole words while they fit …
        var kept = Substring("")
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            let candidate = text[text.startIndex..<word.endIndex]
            if candidate.utf8.count > target { break }
            kept = candidate
        }
        // … or, when not even the first word fits, whole characters of it.
        if kept.isEmpty {
            kept = Substring(text)
            while kept.utf8.count > target { kept = kept.dropLast() }
        }
        // No "writing.…" or "in (terms…": closing punctuation, open brackets and quotes go before the ellipsis.
        var result = String(kept)
        while let last = result.last, trailing.contains(last) || last.isWhitespace { result.removeLast() }
        return result + ellipsis
    }
}
