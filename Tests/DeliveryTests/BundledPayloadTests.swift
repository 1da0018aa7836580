import ContentStore
import DailyVerseTestSupport
import Encodings
import Foundation
import HijriCalendar
import Notifications
import PushServices
import Testing
import VerseCalendar
import VerseOfTheDay

@testable import Delivery

/// The bundled data through the payload builder: every day of a Hijri year — month pools, occasions, nights on their
/// eve, the longest passages — on every platform and in both languages.
@Suite struct BundledPayloadTests {
    @Test func everyDayOfAYearFitsItsPlatformAndTheAPIKeepsTheWholePassage() throws {
        let database = try seededDatabase()
        let created = instant("2024-01-01T00:00:00Z")
        var devices: [Device] = []
        for (n, locale) in DeviceLocale.allCases.enumerated() {
            let tokens: [PushToken] = [
                try apnsToken(10 + n), try .fcm(validating: "fcm-token:APA91bExampleExampleExample_012\(n)"),
                try .webpush(
                    validatingEndpoint: "https://push.example.org/send/abc12\(n)",
                    p256dh: Base64URL.encode(Data([4] + [UInt8](repeating: 7, count: 64))), auth: Base64URL.encode(Data(repeating: 1, count: 16))),
            ]
            for token in tokens {
                devices.append(try database.addDevice(DeviceSettings(token: token, timeZone: "Asia/Baghdad", locale: locale), now: created))
            }
        }
        var translation: [String: String] = [:]
        for line in try String(contentsOf: dataDirectory.appendingPathComponent("quran/translation-en-pickthall.txt"), encoding: .utf8)
            .split(separator: "\n")
        {
            let parts = line.split(separator: "|", maxSplits: 2)
            if parts.count == 3 { translation["\(parts[0])|\(parts[1])"] = String(parts[2]) }
        }
        let reports = DailyVerseReports(database: database)
        var contents = ContentCache(reports: reports)
        var tight = configuration.push
        tight.maximumPayloadBytes = 1500
        var shortened = 0
        var largest = 0
        var longest = (key: "", characters: 0)
        // 1 Muharram 1446 to the last day of Dhu al-Hijjah 1446 (Umm al-Qura), and one day either side.
        var date = try CivilDate(parsing: "2024-07-06")
        while date <= (try CivilDate(parsing: "2025-06-26")) {
            let report = try reports.today(TodayRequest(date: date, timeZone: "Asia/Baghdad"))
            // The API never shortens: the day's text holds every aya of the selection, as the Tanzil file has it.
            let range = try VerseRange(parsing: report.verse.key)
            for ayah in range.start...range.end {
                let text = try #require(translation["\(range.surah)|\(ayah)"], "\(range.surah):\(ayah)")
                #expect(report.verse.translation.text.contains(text), "\(date) \(report.verse.key): \(range.surah):\(ayah) missing")
            }
            if report.verse.translation.text.count > longest.characters { longest = (report.verse.key, report.verse.translation.text.count) }
            for device in devices {
                let content = try contents.content(for: date, device: device)
                let zone = TimeZone(identifier: "Asia/Baghdad")!
                let fireAt = Scheduler.fireInstant(date: date, time: .default, zone: zone)
                // The gateways' limits, and a tight one that the year's long passages must be shortened to meet.
                for push in [configuration.push, tight] {
                    let message = PayloadTemplate(content: content, locale: device.locale, configuration: push).message(
                        for: device, fireAt: fireAt, zone: zone)
                    let limit = push.limit(for: device.platform)
                    #expect(
                        message.countedBytes <= limit,
                        "\(date) \(report.verse.key) \(device.platform) \(device.locale): \(message.countedBytes) > \(limit)")
                    #expect((try? JSONSerialization.jsonObject(with: Data(message.payload.utf8))) != nil, "\(date) \(device.platform): not JSON")
                    if push.maximumPayloadBytes == tight.maximumPayloadBytes, message.payload.contains("…") { shortened += 1 }
                    largest = max(largest, push.maximumPayloadBytes == tight.maximumPayloadBytes ? 0 : message.countedBytes)
                }
            }
            date = date.adding(days: 1)
        }
        // The year's longest selections are long enough that the tight limit had to shorten some, or it proves little;
        // at the gateways' own limits every day fits.
        #expect(longest.characters > 600, "longest selection \(longest.key) has \(longest.characters) characters")
        #expect(shortened > 0)
        #expect(largest > 1500 && largest <= configuration.push.maximumPayloadBytes, "largest payload \(largest) bytes")
    }
}
