/// What the text of a file someone handed the program to import may hold, said once for every import (the Quran and
/// its translations, commentary, whole editions, hadith, devices, month starts).
///
/// Refused: every C0 control character but the tab (and the line feed, with a carriage return just before it, where a
/// field may run over lines), DEL, the C1 controls, and the bidirectional overrides and isolates (U+202D, U+202E,
/// U+2066–U+2069). None of them belongs in a text meant to be read: a NUL cut the text short where SQLite stored it, an
/// escape sequence printed later drives the reader's terminal, and an override shows a reader other words, or another
/// order of them, than the ones stored. The marks a script needs (U+200E, U+200F, U+061C, the joiners) stay, and so do
/// the embeddings U+202A–U+202C: they set a run's direction and never reverse its letters, and the sources use them (a
/// hundred of al-Tawhid's hadith in ThaqalaynDataSources hold them, most as stray U+202C in chapter titles).
public enum ImportedText {
    /// What `text` holds that imported text may not, as one phrase naming the character ("U+0000, a control
    /// character"); nil when it holds none. `newlines`: whether the field may run over lines.
    public static func problem(in text: some StringProtocol, newlines: Bool = false) -> String? {
        let scalars = Array(text.unicodeScalars)
        for (index, scalar) in scalars.enumerated() {
            switch scalar.value {
            case 0x09: continue
            case 0x0A where newlines: continue
            case 0x0D where newlines && index + 1 < scalars.count && scalars[index + 1].value == 0x0A: continue
            default:
                if isControl(scalar) { return "\(codePoint(scalar)), a control character" }
                if isOverride(scalar) { return "\(codePoint(scalar)), a bidirectional override" }
            }
        }
        return nil
    }

    /// A C0 control character, DEL or a C1 control.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool { scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) }

    /// A bidirectional override or isolate (U+202D, U+202E, U+2066–U+2069).
    public static func isOverride(_ scalar: Unicode.Scalar) -> Bool {
        (0x202D...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
    }

    /// A bidirectional formatting character: an embedding, override or isolate, or their end (U+202A–U+202E,
    /// U+2066–U+2069).
    public static func isBidirectionalFormatting(_ scalar: Unicode.Scalar) -> Bool {
        (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
    }

    /// `problem(in:newlines:)` as the reason an import is refused, naming the field: "the body holds U+001B, a control
    /// character, which imported text may not hold".
    public static func refusal(of field: String, in text: some StringProtocol, newlines: Bool = false) -> String? {
        problem(in: text, newlines: newlines).map { "\(field) holds \($0), which imported text may not hold" }
    }

    /// `U+001B`: a character as its code point, four hex digits at least.
    public static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// The UTF-8 byte-order mark some editors write at the start of a text file: not part of its first line.
    public static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// `bytes` without a byte-order mark at its start.
    public static func droppingByteOrderMark<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bytes.SubSequence {
        bytes.starts(with: byteOrderMark) ? bytes.dropFirst(byteOrderMark.count) : bytes[...]
    }
}
