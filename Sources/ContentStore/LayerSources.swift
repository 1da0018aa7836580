import Foundation

/// An edition that feeds a layer, and the part of its blocks the layer takes: `en.mizan`, `en.safi:narrations`; or the
/// hadith imported (`import hadith`) that cite the verse: `hadith` (any collection), `hadith:al-kafi` (one).
public struct LayerSource: Hashable, Sendable, CustomStringConvertible {
    public let edition: String
    public let part: ExcerptPart
    /// With `edition` `hadith`: the collection, or nil for any.
    public let book: String?

    public init(edition: String, part: ExcerptPart = .commentary) {
        self.edition = edition
        self.part = part
        self.book = nil
    }

    /// The hadith imported that cite the verse, from `book` or any collection.
    public static func hadith(_ book: String? = nil) -> LayerSource { LayerSource(hadith: book) }

    private init(hadith book: String?) {
        (edition, part, self.book) = (Self.hadithName, .narrations, book)
    }

    static let hadithName = "hadith"

    /// Whether the source is the imported hadith rather than an edition.
    public var isHadith: Bool { edition == Self.hadithName }

    /// `ID` or `ID:PART` (PART one of commentary, narrations), `hadith` or `hadith:BOOK`; nil when it is none of them.
    public init?(parsing text: String) {
        let pieces = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard (1...2).contains(pieces.count), TafsirEditionInfo.isValidID(pieces[0]) else { return nil }
        if pieces[0] == Self.hadithName {
            guard pieces.count == 1 || HadithFolder.isValidID(pieces[1]) else { return nil }
            self.init(hadith: pieces.count == 2 ? pieces[1] : nil)
            return
        }
        guard let part = pieces.count == 2 ? ExcerptPart(rawValue: pieces[1]) : .commentary else { return nil }
        self.init(edition: pieces[0], part: part)
    }

    public var description: String {
        if isHadith { return book.map { "\(Self.hadithName):\($0)" } ?? Self.hadithName }
        return part == .commentary ? edition : "\(edition):\(part.rawValue)"
    }
}

/// Which editions feed which layer, in order of preference. The data's default is `data/layers.json`'s `sources`; an
/// installation names its own (`--layers`, `DAILYVERSE_LAYERS` or `layers` in the configuration file), layer by layer:
///
///     classical_shia=en.mizan,ar.majma;contemporary=en.noor,en.nemooneh;ahlul_bayt=en.safi:narrations
///
/// A layer not named keeps the default; `foundation=` (nothing after it) gives a layer no edition, so it shows the
/// bundled entries only.
public struct LayerSources: Hashable, Sendable {
    public let byLayer: [String: [LayerSource]]

    public init(_ byLayer: [String: [LayerSource]]) { self.byLayer = byLayer }

    public func sources(for layer: String) -> [LayerSource] { byLayer[layer] ?? [] }

    /// At most this many editions a layer.
    public static let maximumPerLayer = 16

    /// The layer setting as `--layers`, `DAILYVERSE_LAYERS` or `layers` gives it: blank is no setting (nil: the data's
    /// layers), anything else read by `init(parsing:)`.
    public init?(setting text: String) throws(StoreError) {
        guard !text.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
        try self.init(parsing: text)
    }

    /// Reads the configuration's form (above); an error names the bad piece. An empty item (`;;`, a `;` or `,` at the
    /// end, an empty setting) is one: a piece left out by mistake, never passed over.
    public init(parsing text: String) throws(StoreError) {
        var byLayer: [String: [LayerSource]] = [:]
        for piece in text.split(separator: ";", omittingEmptySubsequences: false).map({ $0.trimmingCharacters(in: .whitespaces) }) {
            guard !piece.isEmpty else {
                throw .invalidLayerSources("an empty item in '\(text.prefix(60))': expected LAYER=EDITION[,EDITION…] between each ';'")
            }
            let parts = piece.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard parts.count == 2 else {
                throw .invalidLayerSources("'\(piece.prefix(60))' is not LAYER=EDITION[,EDITION…]")
            }
            guard Layer.ids.contains(parts[0]) else {
                throw .invalidLayerSources("unknown layer '\(parts[0].prefix(40))': expected one of \(Layer.ids.joined(separator: ", "))")
            }
            guard byLayer[parts[0]] == nil else { throw .invalidLayerSources("the layer '\(parts[0])' is named twice") }
            var sources: [LayerSource] = []
            // `LAYER=` alone names no edition (above); a name left empty between commas is a mistake.
            let names: [String] =
                parts[1].isEmpty
                ? [] : parts[1].split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            for name in names {
                guard !name.isEmpty else { throw .invalidLayerSources("an empty edition in '\(piece.prefix(60))': expected EDITION[,EDITION…]") }
                guard let source = LayerSource(parsing: name) else {
                    throw .invalidLayerSources(
                        "'\(name.prefix(60))' is not an edition such as en.mizan, one with its part such as en.safi:narrations, or hadith[:BOOK]")
                }
                sources.append(source)
            }
            guard sources.count <= Self.maximumPerLayer else {
                throw .invalidLayerSources("\(parts[0]) names \(sources.count) editions: at most \(Self.maximumPerLayer)")
            }
            byLayer[parts[0]] = sources
        }
        self.byLayer = byLayer
    }

    /// These sources, with `overrides`' layers in place of theirs.
    public func overridden(by overrides: LayerSources) -> LayerSources {
        LayerSources(byLayer.merging(overrides.byLayer) { _, new in new })
    }

    /// The configuration's form, every layer named.
    public var text: String {
        Layer.ids.map { "\($0)=" + sources(for: $0).map(\.description).joined(separator: ",") }.joined(separator: ";")
    }
}

extension LayerSources: Codable {
    public init(from decoder: Decoder) throws {
        let raw = try decoder.singleValueContainer().decode([String: [String]].self)
        var byLayer: [String: [LayerSource]] = [:]
        for (layer, names) in raw {
            guard Layer.ids.contains(layer) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "unknown layer '\(layer)'"))
            }
            byLayer[layer] = try names.map { name in
                guard let source = LayerSource(parsing: name) else {
                    throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "bad source '\(name)'"))
                }
                return source
            }
        }
        self.byLayer = byLayer
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(byLayer.mapValues { $0.map(\.description) })
    }
}
