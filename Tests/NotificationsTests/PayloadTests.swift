import Encodings
import Foundation
import HijriCalendar
import PushServices
import Testing

@testable import Notifications

@Suite struct PayloadTests {
    static let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")
    static let configuration = PushConfiguration(apnsTopic: "org.example.quran")
    static let created = Date(timeIntervalSince1970: 1_735_689_600)

    static func content(occasion: Bool = false, translation: String? = nil, arabic: String? = nil) throws -> DailyContent {
        if occasion {
            return DailyContent(
                localDate: try CivilDate(parsing: "2025-06-14"), hijri: HijriDate(year: 1446, month: 12, day: 18), verseKey: "5:67",
                surahName: "Al-Ma'idah", surahNameArabic: "المائدة",
                arabic: arabic ?? "يَا أَيُّهَا الرَّسُولُ بَلِّغْ مَا أُنزِلَ إِلَيْكَ مِن رَّبِّكَ",
                translation: translation ?? "O Messenger! Make known that which hath been revealed unto thee from thy Lord.",
                themeID: "the-proclamation", themeName: "The Proclamation",
                occasion: .init(id: "ghadir", name: "18 Dhu al-Hijjah: Eid al-Ghadir", nameArabic: "عيد الغدير"))
        }
        return DailyContent(
            localDate: try CivilDate(parsing: "2025-03-01"), hijri: HijriDate(year: 1446, month: 9, day: 1), verseKey: "44:4",
            surahName: "Ad-Dukhan", surahNameArabic: "الدخان", arabic: arabic ?? "فِيهَا يُفْرَقُ كُلُّ أَمْرٍ حَكِيمٍ",
            translation: translation ?? "Whereon every wise command is made clear", themeID: "fasting-and-revelation",
            themeName: "Fasting and the Revelation", occasion: nil)
    }

    static func device(_ platform: Platform, locale: DeviceLocale) throws -> Device {
        let token: PushToken =
            switch platform {
            case .apns: try .apns(validating: String(repeating: "0123456789abcdef", count: 4))
            case .fcm: try .fcm(validating: "fcm-token:APA91bExampleExampleExample_0123")
            case .webpush:
                try .webpush(
                    validatingEndpoint: "https://push.example.org/send/abc123",
                    p256dh: Base64URL.encode(Data([4] + [UInt8](repeating: 7, count: 64))), auth: Base64URL.encode(Data(repeating: 1, count: 16)))
            }
        return Device(
            id: "8c2f1e4a-0000-4000-8000-000000000001", token: token, timeZone: "Asia/Baghdad", locale: locale, displayTheme: "midnight",
            createdAt: created, updatedAt: created)
    }

    /// The golden file's text: headers (sorted) then the payload pretty-printed with sorted keys.
    static func rendered(_ message: PushMessage) throws -> String {
        let payload = try JSONSerialization.jsonObject(with: Data(message.payload.utf8))
        let pretty = try JSONSerialization.data(withJSONObject: payload, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        let headers = message.headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "\n")
        return "\(headers)\n\n\(String(decoding: pretty, as: UTF8.self))\n"
    }

    @Test(arguments: Platform.allCases, DeviceLocale.allCases)
    func goldenFiles(platform: Platform, locale: DeviceLocale) throws {
        for occasion in [false, true] {
            let content = try Self.content(occasion: occasion)
            let zone = TimeZone(identifier: "Asia/Baghdad")!
            let fireAt = Scheduler.fireInstant(date: content.localDate, time: .default, zone: zone)
            let message = PayloadBuilder.build(
                device: try Self.device(platform, locale: locale), content: content, fireAt: fireAt, configuration: Self.configuration)
            let name = "\(platform.rawValue)-\(locale.rawValue)\(occasion ? "-occasion" : "").txt"
            let file = Self.golden.appendingPathComponent(name)
            let text = try Self.rendered(message)
            if ProcessInfo.processInfo.environment["DAILYVERSE_RECORD_GOLDEN"] != nil {
                try FileManager.default.createDirectory(at: Self.golden, withIntermediateDirectories: true)
                try text.write(to: file, atomically: true, encoding: .utf8)
            }
            let expected = try String(contentsOf: file, encoding: .utf8)
            #expect(text == expected, "\(name) differs from its golden file")
        }
    }

    @Test func apnsCarriesTheKeysTheAppNeeds() throws {
        let content = try Self.content()
        let message = PayloadBuilder.build(
            device: try Self.device(.apns, locale: .en), content: content, fireAt: Date(timeIntervalSince1970: 1_740_805_200),
            configuration: Self.configuration)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(message.payload.utf8)) as? [String: Any])
        let aps = try #require(json["aps"] as? [String: Any])
        #expect(aps["mutable-content"] as? Int == 1)
        #expect(aps["thread-id"] as? String == "daily-verse")
        let alert = try #require(aps["alert"] as? [String: Any])
        #expect(alert["title"] as? String == "1 Ramadan 1446 · Verse of the Day")
        #expect(json["verse_key"] as? String == "44:4")
        // Absent keys are left out, not sent as null (as the FCM payload already did).
        #expect(json["occasion"] == nil)
        #expect(!message.payload.contains("null"))
        // A visible reminder at a time the user chose goes at once: priority 10, FCM high.
        #expect(message.headers["apns-priority"] == "10")
        #expect(message.headers["apns-push-type"] == "alert")
        #expect(message.headers["apns-topic"] == "org.example.quran")
        #expect((message.headers["apns-collapse-id"]?.utf8.count ?? 99) <= 64)
        // Expires at the end of that local day in Baghdad (UTC+3): 2025-03-01T21:00:00Z.
        #expect(message.headers["apns-expiration"] == "1740862800")
        // Web Push Topic: at most 32 URL-safe base64 characters.
        let web = PayloadBuilder.build(
            device: try Self.device(.webpush, locale: .en), content: content, fireAt: Date(timeIntervalSince1970: 1_740_805_200),
            configuration: Self.configuration)
        let topic = try #require(web.headers["Topic"])
        #expect(topic.count <= 32 && topic.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        #expect(web.headers["TTL"] == "57600")  // 05:00Z to 21:00Z
        // FCM data values are strings only.
        let fcm = PayloadBuilder.build(
            device: try Self.device(.fcm, locale: .ar), content: content, fireAt: Date(timeIntervalSince1970: 1_740_805_200),
            configuration: Self.configuration)
        let fcmJSON = try #require(try JSONSerialization.jsonObject(with: Data(fcm.payload.utf8)) as? [String: Any])
        let data = try #require((fcmJSON["message"] as? [String: Any])?["data"] as? [String: Any])
        #expect(data.values.allSatisfy { $0 is String })
    }

    @Test(arguments: [
        ("and record it in writing. Then more words follow here", 30, "and record it in writing…"),
        ("the debt is in (terms agreed) between them", 22, "the debt is in…"),
        ("see the note ( it is long and more", 18, "see the note…"),
        ("he said: “ Lo! We are with you” and more", 16, "he said…"),
        ("يَا أَيُّهَا الَّذِينَ آمَنُوا، إِذَا تَدَايَنتُم", 70, "يَا أَيُّهَا الَّذِينَ آمَنُوا…"),
    ])
    func aShortenedBodyNeverEndsOnPunctuationOrAnOpenBracket(text: String, limit: Int, expected: String) {
        let shortened = TextShortening.shorten(text, toAtMostBytes: limit)
        #expect(shortened == expected)
        #expect(shortened.utf8.count <= limit)
    }

    @Test(arguments: Platform.allCases, DeviceLocale.allCases)
    func longBodiesAreShortenedAtAWordWithinTheLimit(platform: Platform, locale: DeviceLocale) throws {
        // 2:282, the longest verse, repeated: far over any limit in both scripts.
        let english = String(repeating: "O ye who believe! When ye contract a debt for a fixed term, record it in writing. ", count: 80)
        let arabic = String(repeating: "يَا أَيُّهَا الَّذِينَ آمَنُوا إِذَا تَدَايَنتُم بِدَيْنٍ إِلَىٰ أَجَلٍ مُّسَمًّى فَاكْتُبُوهُ ", count: 60)
        let content = try Self.content(translation: english, arabic: arabic)
        for limit in [4096, 2000, 1500] {
            var configuration = Self.configuration
            configuration.maximumPayloadBytes = limit
            let message = PayloadBuilder.build(
                device: try Self.device(platform, locale: locale), content: content, fireAt: Date(timeIntervalSince1970: 1_740_805_200),
                configuration: configuration)
            let counted = configuration.limit(for: platform)
            #expect(message.countedBytes <= counted, "\(platform) \(locale) \(limit): \(message.countedBytes) bytes")
            let body = try Self.body(of: message)
            #expect(body.hasSuffix("…"))
            let kept = String(body.dropLast())
            let original = locale == .en ? english : arabic
            // A prefix of the original, whole graphemes, ending where a word ends.
            #expect(original.hasPrefix(kept))
            let rest = original.dropFirst(kept.count)
            #expect(
                rest.first == " " || (rest.first?.isPunctuation == true && rest.dropFirst().first == " "), "cut inside a word: \(rest.prefix(10))")
            #expect(Array(original.unicodeScalars.prefix(kept.unicodeScalars.count)) == Array(kept.unicodeScalars))
            // Nothing is shortened more than needed: the payload is within a word or two of the limit.
            #expect(message.countedBytes > counted - 2 * 160, "\(platform) \(locale) \(limit): only \(message.countedBytes) bytes")
        }
    }

    @Test func webPushPlaintextFitsOneEncryptedRecordAtTheEdge() throws {
        // A body that makes the plaintext exactly 3993 bytes goes whole; one byte more and it is shortened, and the
        // encrypted body is never over 4096.
        let device = try Self.device(.webpush, locale: .en)
        let fireAt = Date(timeIntervalSince1970: 1_740_805_200)
        func message(_ translation: String) throws -> PushMessage {
            PayloadBuilder.build(
                device: device, content: try Self.content(translation: translation), fireAt: fireAt, configuration: Self.configuration)
        }
        let base = try message("").byteCount
        let words = String(repeating: "abcdefghi ", count: 500)
        let exact = String(words.prefix(WebPushEncryption.maximumPlaintextBytes - base))
        let fitting = try message(exact)
        #expect(fitting.byteCount == 3993)
        #expect(try Self.body(of: fitting) == exact)
        let over = try message(exact + "x")
        #expect(over.byteCount <= 3993)
        let shortened = try Self.body(of: over)
        #expect(shortened.hasSuffix("…") && exact.hasPrefix(String(shortened.dropLast())))
        let file = Self.golden.appendingPathComponent("webpush-en-edge.txt")
        let text = try Self.rendered(over)
        if ProcessInfo.processInfo.environment["DAILYVERSE_RECORD_GOLDEN"] != nil { try text.write(to: file, atomically: true, encoding: .utf8) }
        #expect(text == (try String(contentsOf: file, encoding: .utf8)), "webpush-en-edge.txt differs from its golden file")
    }

    @Test func fcmCountsWhatFirebaseCounts() throws {
        // The token, the Android options and the APNs headers are not part of the 4096 bytes; a body that fits in
        // what Firebase counts is sent whole even though the request is larger.
        let device = try Self.device(.fcm, locale: .en)
        let fireAt = Date(timeIntervalSince1970: 1_740_805_200)
        let translation = String(repeating: "abcdefghi ", count: 340)
        let message = PayloadBuilder.build(
            device: device, content: try Self.content(translation: translation), fireAt: fireAt, configuration: Self.configuration)
        #expect(message.byteCount > 4096)
        #expect(message.countedBytes <= 4096)
        #expect(try Self.body(of: message) == translation)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(message.payload.utf8)) as? [String: Any])
        let inner = try #require(object["message"] as? [String: Any])
        let apns = try #require((inner["apns"] as? [String: Any])?["payload"])
        let apnsBytes = try JSONSerialization.data(withJSONObject: apns).count
        #expect(apnsBytes <= message.countedBytes)
    }

    @Test func titlesFitOneLineAndOccasionsAreCapitalised() throws {
        let occasion = try Self.content(occasion: true)
        let english = NotificationText(occasion, locale: .en)
        #expect(english.title == "Eid al-Ghadir" && english.subtitle == "18 Dhu al-Hijjah 1446 · Al-Ma'idah 5:67")
        #expect(NotificationText.shortName("17 Rabi al-Awwal: the Birth of the Prophet") == "The Birth of the Prophet")
        #expect(NotificationText.shortName("27 Rajab: al-Mab'ath") == "Al-Mab'ath")
        #expect(NotificationText(occasion, locale: .ar).title == "عيد الغدير")
        // Every occasion's title, and an ordinary day's, within 33 characters.
        let names =
            try JSONSerialization.jsonObject(
                with: Data(
                    contentsOf: Self.golden.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                        .appendingPathComponent("data/calendar/occasions.json"))) as? [String: Any]
        let occasions = names?["occasions"] as? [[String: Any]] ?? []
        #expect(occasions.count > 10)
        for item in occasions {
            let title = NotificationText.shortName(item["name"] as? String ?? "")
            #expect(title.count <= 33 && title.first?.isUppercase == true, "\(title)")
            if item["observed"] as? String == "night" {
                let tonight = "Tonight: " + NotificationText.shortName(item["name"] as? String ?? "", capitalised: false)
                #expect(tonight.count <= 42, "\(tonight)")
            }
        }
        #expect(NotificationText(try Self.content(), locale: .en).title.count <= 33)
    }

    /// The evening a night begins: the title says "Tonight", the data says so to the app, and the other occasions
    /// of the day are named in the data on every platform.
    @Test func aNightIsAnnouncedAsTonight() throws {
        let content = DailyContent(
            localDate: try CivilDate(parsing: "2025-03-22"), hijri: HijriDate(year: 1446, month: 9, day: 22), verseKey: "97:1-5",
            surahName: "Al-Qadr", surahNameArabic: "القدر", arabic: "إِنَّا أَنزَلْنَاهُ فِي لَيْلَةِ الْقَدْرِ",
            translation: "Lo! We revealed it on the Night of Power.",
            themeID: "night-of-power", themeName: "The Night of Power",
            occasion: .init(id: "qadr-23", name: "23 Ramadan: the Third Night of Qadr", nameArabic: "ليلة القدر الثالثة", tonight: true),
            otherOccasions: [.init(id: "some-day", name: "22 Ramadan: Some Day", nameArabic: "يوم", tonight: false)])
        #expect(NotificationText(content, locale: .en).title == "Tonight: the Third Night of Qadr")
        #expect(NotificationText(content, locale: .ar).title == "الليلة: ليلة القدر الثالثة")
        for platform in Platform.allCases {
            let message = PayloadBuilder.build(
                device: try Self.device(platform, locale: .en), content: content, fireAt: Date(timeIntervalSince1970: 1_742_623_200),
                configuration: Self.configuration)
            #expect(message.payload.contains("\"occasion\":\"qadr-23\""), "\(platform)")
            #expect(message.payload.contains("\"occasion_tonight\":\"true\""), "\(platform)")
            #expect(message.payload.contains("\"other_occasions\":\"some-day\""), "\(platform)")
            #expect(message.payload.contains("Tonight: the Third Night of Qadr"), "\(platform)")
        }
        // A day occasion carries neither.
        let day = PayloadBuilder.build(
            device: try Self.device(.fcm, locale: .en), content: try Self.content(occasion: true), fireAt: Self.created,
            configuration: Self.configuration)
        #expect(!day.payload.contains("occasion_tonight") && !day.payload.contains("other_occasions"))
    }

    @Test func shorteningNeverSplitsAGrapheme() {
        // A single "word" of Arabic letters with marks, and emoji with modifiers: cut by whole characters.
        let word = String(repeating: "بِّ", count: 50) + String(repeating: "👩🏽‍🏫", count: 10)
        for limit in [4, 10, 33, 100, 250, 400] {
            let short = TextShortening.shorten(word, toAtMostBytes: limit)
            let kept = String(short.dropLast())
            #expect(short.hasSuffix("…"))
            #expect(word.hasPrefix(kept))
            #expect(short.utf8.count <= limit)
            // The next scalar is never a mark or modifier left behind by the cut.
            let next = word.unicodeScalars.dropFirst(kept.unicodeScalars.count).first
            #expect(next == "\u{0628}" || next == "\u{1F469}", "cut before \(String(describing: next))")
        }
        #expect(TextShortening.shorten("short", toAtMostBytes: 100) == "short")
        #expect(TextShortening.shorten("two words", toAtMostBytes: 8) == "two…")
    }

    static func body(of message: PushMessage) throws -> String {
        let json = try JSONSerialization.jsonObject(with: Data(message.payload.utf8)) as? [String: Any] ?? [:]
        switch message.platform {
        case .apns: return ((json["aps"] as? [String: Any])?["alert"] as? [String: Any])?["body"] as? String ?? ""
        case .fcm: return (((json["message"] as? [String: Any])?["notification"] as? [String: Any])?["body"] as? String) ?? ""
        case .webpush: return (json["options"] as? [String: Any])?["body"] as? String ?? ""
        }
    }
}

@Suite struct JSONTextTests {
    @Test func escapesAsJSONEncoderDoes() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        let samples = [
            "plain", "", "quote \" and backslash \\", "slash / stays", "new\nline\ttab\rreturn", "\u{01}\u{1F}\u{08}\u{0C}",
            "فِيهَا يُفْرَقُ كُلُّ أَمْرٍ حَكِيمٍ", "👩🏽‍🏫 emoji", "Allah's \"word\"",
        ]
        for sample in samples {
            #expect(JSON.quoted(sample) == String(decoding: try encoder.encode(sample), as: UTF8.self), "\(sample.debugDescription)")
            // And it reads back as the same string.
            let decoded = try JSONDecoder().decode(String.self, from: Data(JSON.quoted(sample).utf8))
            #expect(decoded == sample)
        }
        // Numbers, as headers carry them.
        for number in [0, 7, 10, 57_600, 1_740_862_800, -86_400, Int.max, Int.min] {
            var out = JSONBytes()
            out.append(number)
            #expect(String(decoding: out.bytes, as: UTF8.self) == String(number))
        }
    }
}
