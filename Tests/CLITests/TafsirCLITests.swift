import Foundation
import Testing

/// `import tafsir` as a user runs it: the fixture's four editions, their terms, and a folder that is not one.
@Suite struct TafsirCLITests {
    static let fixture = CLI.repository.appendingPathComponent("Tests/ContentStoreTests/Fixtures/thaqalayn-tafsir").path

    @Test func editionsAreImportedWithTheirTerms() throws {
        let db = CLI.freshDatabase()
        let text = CLI.run(["import", "tafsir", Self.fixture, "--edition", "en.noor", "--edition", "en.safi"], database: db)
        #expect(text.status == 0, "\(text.stderr)")
        #expect(
            text.stdout.contains("imported en.noor: Tafsir Noor (English), Mohsen Gharaati — 11 blocks, 12 verses; machine translation not known"))
        #expect(
            text.stdout.contains(
                "imported en.safi: Tafsir as-Safi (English), Mulla Mohsin Fayz Kashani — 10 blocks, 12 verses; a machine translation"))
        #expect(text.stdout.components(separatedBy: "terms of app-furqan: CC BY-ND 4.0").count == 2, "the source's terms once")
        let json = CLI.run(["import", "tafsir", Self.fixture, "--json"], database: db)
        let list = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(list.map { $0["edition"] as? String } == ["ar.mizan", "en.mizan", "en.nemooneh", "en.noor", "en.safi"])
        #expect(list.allSatisfy { Set($0.keys) == ["edition", "name", "author", "blocks", "verses", "licence", "machine_translation"] })
        for (arguments, value) in [
            ([Self.fixture, "--edition", "en.xx"], "'en.xx'"), (["/nonexistent-folder"], "/nonexistent-folder/editions.json"),
            ([CLI.repository.appendingPathComponent("data").path], "editions.json"),
        ] {
            let result = CLI.run(["import", "tafsir"] + arguments, database: db)
            #expect(
                result.status == 1 && result.stderr.contains(value) && result.stderr.split(separator: "\n").count == 1,
                "\(arguments): \(result.stderr)")
        }
    }
}

/// `import hadith` as a user runs it: the synthetic fixture in the dataset's layouts, the terms said, the layer that
/// shows a hadith with its reference, and a folder that is not the dataset.
@Suite struct HadithCLITests {
    static let fixture = CLI.repository.appendingPathComponent("Tests/ContentStoreTests/Fixtures/hadith").path

    @Test func collectionsAreImportedAndShownWithTheirReferences() throws {
        let db = CLI.freshDatabase()
        let text = CLI.run(["import", "hadith", Self.fixture, "--book", "al-kafi"], database: db)
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("imported al-kafi: al-Kafi, al-Kulayni — 7 hadith, 3 citing 3 verses"), "\(text.stdout)")
        #expect(text.stdout.contains("terms: No licence stated"))
        let json = CLI.run(["import", "hadith", Self.fixture, "--json"], database: db)
        let list = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(list.map { $0["book"] as? String } == ["al-kafi", "test-book"])
        let layer = CLI.run(["verse", "2:255", "--layer", "ahlul_bayt", "--layers", "ahlul_bayt=hadith:al-kafi", "--json"], database: db).json
        let source = layer["source"] as? [String: Any] ?? [:]
        #expect(
            source["work"] as? String == "al-Kafi" && (source["reference"] as? String)?.contains("chapter 1 (Test chapter one), hadith 2") == true)
        for (arguments, value) in [
            ([Self.fixture, "--book", "al-kaafi"], "'al-kaafi'"), (["/nonexistent-folder"], "/nonexistent-folder"),
        ] {
            let result = CLI.run(["import", "hadith"] + arguments, database: db)
            #expect(
                result.status == 1 && result.stderr.contains(value) && result.stderr.split(separator: "\n").count == 1,
                "\(arguments): \(result.stderr)")
        }
    }
}
